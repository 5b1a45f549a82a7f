// The package page: files of the built page under /public/.
import type { Middleware } from 'koa';
import koaStatic from 'koa-static';

const PREFIX = '/public';

export function publicFiles(dir: string): Middleware {
  const serve = koaStatic(dir, { index: 'index.html', defer: false });
  return async (ctx, next) => {
    if (ctx.path === PREFIX) return ctx.redirect(`${PREFIX}/index.html`);
    if (!ctx.path.startsWith(`${PREFIX}/`)) return next();
    const original = ctx.path;
    ctx.path = original.slice(PREFIX.length);
    try {
      await serve(ctx, async () => {});
    } finally {
      ctx.path = original;
    }
  };
}
