// The HTTP floor of the benchmark: Koa with one router route that answers {} to anything, in its
// own process like the real server. Prints the same "listening on" line as the server.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Router } from '@koa/router';
import Koa from 'koa';
import { FLOOR_PATH } from './processes.js';

const router = new Router();
router.all(FLOOR_PATH, (ctx) => {
  ctx.body = {};
});
const app = new Koa();
app.use(router.routes());

const server = http.createServer(app.callback());
server.listen(0, '127.0.0.1', () => {
  process.stderr.write(`floor listening on http://localhost:${(server.address() as AddressInfo).port}\n`);
});
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close();
});
