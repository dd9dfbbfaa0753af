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
  // An anonymous one leaves the name empty, as in node's messages.
  if (typeof value === 'function') return ` Received function ${value.name}`;
  if (typeof value === 'object') {
    const ctor = value.constructor && value.constructor.name;
    return ctor ? ` Received an instance of ${ctor}` : ` Received ${inspect(value, { depth: -1 })}`;
  }
  let shown = inspect(value, { colors: false });
  if (shown.length > 28) shown = `${shown.slice(0, 25)}...`;
  return ` Received type ${typeof value} (${shown})`;
}

// "a, b, or c" / "a or b" / "a".
function listed(items) {
  if (items.length > 2) return `${items.slice(0, -1).join(', ')}, or ${items[items.length - 1]}`;
  return items.join(' or ');
}

// The expected types the way node words them: primitive types first in lower
// case, then classes as "an instance of ...", then anything else.
const primitiveTypes = ['string', 'function', 'number', 'object', 'Function', 'Object', 'boolean', 'bigint', 'symbol'];

function expectedTypes(expected) {
  const types = [];
  const instances = [];
  const other = [];
  for (const type of Array.isArray(expected) ? expected : [expected]) {
    if (primitiveTypes.includes(type)) types.push(type.toLowerCase());
    else if (/^([A-Z][a-z0-9]*)+$/.test(type)) instances.push(type);
    else other.push(type);
  }
  // Next to classes, a plain object is one more class.
  if (instances.length > 0 && types.includes('object')) {
    types.splice(types.indexOf('object'), 1);
    instances.push('Object');
  }
  const parts = [];
  if (types.length > 0) parts.push(`${types.length > 1 ? 'one of type' : 'of type'} ${listed(types)}`);
  if (instances.length > 0) parts.push(`an instance of ${listed(instances)}`);
  if (other.length > 1) parts.push(`one of ${listed(other)}`);
  else if (other.length === 1) parts.push(`${other[0].toLowerCase() !== other[0] ? 'an ' : ''}${other[0]}`);
  return parts.join(' or ');
}

function invalidArgType(name, expected, value) {
  const what = name.includes('.') ? 'property' : 'argument';
  return codedError(TypeError, 'ERR_INVALID_ARG_TYPE',
                    `The "${name}" ${what} must be ${expectedTypes(expected)}.${describe(value)}`);
}

// node's validateArray and friends: "must be an instance of Array".
function invalidArgInstance(name, ctor, value) {
  const what = name.includes('.') ? 'property' : 'argument';
  return codedError(TypeError, 'ERR_INVALID_ARG_TYPE',
                    `The "${name}" ${what} must be an instance of ${ctor}.${describe(value)}`);
}

// node writes integers beyond 2**32 with '_' between thousands.
function withSeparators(digits) {
  const sign = digits[0] === '-' ? '-' : '';
  let rest = sign ? digits.slice(1) : digits;
  let out = '';
  for (; rest.length > 3; rest = rest.slice(0, -3)) out = `_${rest.slice(-3)}${out}`;
  return `${sign}${rest}${out}`;
}

// node's ERR_INVALID_ARG_VALUE.
function invalidArgValue(name, value, reason) {
  let shown = inspect(value);
  if (shown.length > 128) shown = `${shown.slice(0, 128)}...`;
  return codedError(TypeError, 'ERR_INVALID_ARG_VALUE',
                    `The ${name.includes('.') ? 'property' : 'argument'} '${name}' ${reason}. Received ${shown}`);
}

function outOfRange(name, range, value) {
  const received = Number.isInteger(value) && Math.abs(value) > 2 ** 32 ? withSeparators(String(value)) : inspect(value);
  return codedError(RangeError, 'ERR_OUT_OF_RANGE',
                    `The value of "${name}" is out of range. It must be ${range}. Received ${received}`);
}

// node's validateInt32 / validateUint32.
function validateInteger(value, name, min, max) {
  if (typeof value !== 'number') throw invalidArgType(name, 'number', value);
  if (!Number.isInteger(value)) throw outOfRange(name, 'an integer', value);
  if (value < min || value > max) throw outOfRange(name, `>= ${min} && <= ${max}`, value);
}

// node's getTimerDuration: a non-negative finite number of milliseconds,
// more than a signed 32-bit timer holds cut down, with node's warning.
const TIMEOUT_MAX = 2 ** 31 - 1;
function timerDuration(msecs, name) {
  if (typeof msecs !== 'number') throw invalidArgType(name, 'number', msecs);
  if (msecs < 0 || !Number.isFinite(msecs)) throw outOfRange(name, 'a non-negative finite number', msecs);
  if (msecs > TIMEOUT_MAX) {
    process.emitWarning(`${msecs} does not fit into a 32-bit signed integer.\nTimer duration was truncated to ` +
                        `${TIMEOUT_MAX}.`, 'TimeoutOverflowWarning');
    return TIMEOUT_MAX;
  }
  return msecs;
}

module.exports = {
  codedError, invalidArgInstance, invalidArgType, invalidArgValue, outOfRange, timerDuration, validateInteger,
};
