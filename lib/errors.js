'use strict';

// Errors shaped like node's internal ones: a `code` property, and the code in
// the name as node prints it ("TypeError [ERR_X]: ...").

const { inspect } = require('node:util');

function codedError(Base, code, message) {
  const err = new Base(message);
  Object.defineProperty(err, 'code', { value: code, enumerable: true, writable: true, configurable: true });
  return err;
}

function describe(value) {
  if (value === null || value === undefined) return ` Received ${value}`;
  if (typeof value === 'function') return ` Received function ${value.name || '<anonymous>'}`;
  if (typeof value === 'object') {
    const ctor = value.constructor && value.constructor.name;
    return ctor ? ` Received an instance of ${ctor}` : ` Received ${inspect(value, { depth: -1 })}`;
  }
  let shown = inspect(value, { colors: false });
  if (shown.length > 28) shown = `${shown.slice(0, 25)}...`;
  return ` Received type ${typeof value} (${shown})`;
}

function invalidArgType(name, expected, value) {
  const list = Array.isArray(expected) ? expected.join(' or ') : expected;
  const what = name.includes('.') ? 'property' : 'argument';
  return codedError(TypeError, 'ERR_INVALID_ARG_TYPE',
                    `The "${name}" ${what} must be of type ${list}.${describe(value)}`);
}

// node's validateArray and friends: "must be an instance of Array".
function invalidArgInstance(name, ctor, value) {
  const what = name.includes('.') ? 'property' : 'argument';
  return codedError(TypeError, 'ERR_INVALID_ARG_TYPE',
                    `The "${name}" ${what} must be an instance of ${ctor}.${describe(value)}`);
}

function outOfRange(name, range, value) {
  return codedError(RangeError, 'ERR_OUT_OF_RANGE',
                    `The value of "${name}" is out of range. It must be ${range}. Received ${inspect(value)}`);
}

// node's validateInt32 / validateUint32.
function validateInteger(value, name, min, max) {
  if (typeof value !== 'number') throw invalidArgType(name, 'number', value);
  if (!Number.isInteger(value)) throw outOfRange(name, 'an integer', value);
  if (value < min || value > max) throw outOfRange(name, `>= ${min} && <= ${max}`, value);
}

module.exports = { codedError, invalidArgInstance, invalidArgType, outOfRange, validateInteger };
