'use strict';

module.exports = {
  spec: ['test/*.test.js'],
  timeout: 20000,
  slow: 2000,
  reporter: 'spec',
};
