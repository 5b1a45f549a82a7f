// Loaded into a server by bench/pglite-memory.ts (`node --require`): on SIGUSR2 it writes the
// process's own view of its memory to the file named by REPOADMIN_MEMORY_PROBE, as JSON. Plain
// JavaScript, so that measuring does not load a TypeScript loader into the process measured.
'use strict';
const fs = require('node:fs');

const file = process.env.REPOADMIN_MEMORY_PROBE;
/** Every WebAssembly memory made in the process (PGlite makes its own with `new WebAssembly.Memory`). */
const memories = [];
const Memory = WebAssembly.Memory;
WebAssembly.Memory = new Proxy(Memory, {
  construct(target, args, newTarget) {
    const memory = Reflect.construct(target, args, newTarget);
    memories.push(new WeakRef(memory));
    return memory;
  },
});

if (file) {
  process.on('SIGUSR2', () => {
    const usage = process.memoryUsage();
    const wasm = memories.map((ref) => ref.deref()).filter((m) => m !== undefined).reduce((sum, m) => sum + m.buffer.byteLength, 0);
    fs.writeFileSync(file, JSON.stringify({ ...usage, wasm }));
  });
}
