// The prompts the CLI asks with, loaded on first use (deps.ts). Named here, not taken from a
// dynamic import of the whole package, so that the bundle leaves out every other prompt (the
// editor prompt alone brings a third of the bundle's size).
export { confirm, input, password } from '@inquirer/prompts';
