export * from './auth.js';
export * from './common.js';
export * from './errors.js';
export * from './repositories.js';
export * from './users.js';
export * from './tokens.js';
export * from './trash.js';
export * from './retention.js';
