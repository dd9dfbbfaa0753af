'use strict';

// require('tlswrap/https'): node:https's names over tlswrap.
module.exports = require('./lib/https');
