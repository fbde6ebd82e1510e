// Drives Debian's chromium (playwright-core, no downloaded browser) through
// the console's pages.  Run by tests/e2e/test_console.py, which starts the
// web servers, fills the store through the real endpoints and passes the
// phase and its data as JSON on stdin.  Prints TAP lines ("ok - ..." and
// "not ok - ...") and "# data <json>" lines for the Python side.
'use strict';

const fs = require('fs');
const { chromium } = require('playwright-core');

const cfg = JSON.parse(fs.readFileSync(0, 'utf8'));
let failed = 0;

function ok(name) { console.log(`ok - browser ${cfg.phase}: ${name}`); }
function notOk(name, why) {
  failed++;
  console.log(`not ok - browser ${cfg.phase}: ${name}: ${String(why).replace(/\s+/g, ' ')}`);
}
function check(cond, what) { if (!cond) throw new Error(what); }
async function step(name, fn) {
  try { await fn(); ok(name); } catch (e) { notOk(name, e && e.message ? e.message : e); }
}

const base = cfg.base;            // http://127.0.0.1:PORT/hooks/console
const origin = new URL(base).origin;
const mount = new URL(base).pathname;

// The headers every answer carries, 401s and refusals included.
function checkHeaders(resp, what) {
  const h = resp.headers();
  const csp = h['content-security-policy'] || '';
  check(/frame-ancestors 'none'/.test(csp), `${what}: CSP without frame-ancestors 'none': ${csp}`);
  check(/default-src 'none'/.test(csp) && !/script-src/.test(csp) && !/unsafe-inline/.test(csp),
    `${what}: CSP allows scripts: ${csp}`);
  check(h['x-content-type-options'] === 'nosniff', `${what}: X-Content-Type-Options ${h['x-content-type-options']}`);
  check(h['referrer-policy'] === 'no-referrer', `${what}: Referrer-Policy ${h['referrer-policy']}`);
  check(h['cache-control'] === 'no-store', `${what}: Cache-Control ${h['cache-control']}`);
}

async function tokenOf(page) {
  const t = await page.locator('input[name=csrf]').first().getAttribute('value');
  check(t && t.length === 64, 'no CSRF token on the page');
  return t;
}

async function main() {
  // playwright-core refuses --user-data-dir in launch(): it starts the
  // browser with a new empty temporary one of its own, removed on close.
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const creds = { username: cfg.user, password: cfg.password };
  try {
    if (cfg.phase === 'main') await phaseMain(browser, creds);
    else if (cfg.phase === 'readonly') await phaseReadonly(browser, creds);
    else if (cfg.phase === 'server-auth') await phaseServerAuth(browser, creds);
    else throw new Error('unknown phase ' + cfg.phase);
  } finally {
    await browser.close();
  }
}

async function phaseMain(browser, creds) {
  const ctx = await browser.newContext({ httpCredentials: creds, javaScriptEnabled: true });
  const page = await ctx.newPage();
  const dialogs = [];
  page.on('dialog', d => { dialogs.push(d.message()); d.dismiss(); });

  await step('overview: counts, duplicate rate, dead letters, two SVG charts, headers', async () => {
    const r = await page.goto(base + '/');
    check(r.status() === 200, `status ${r.status()}`);
    checkHeaders(r, 'overview');
    const text = await page.locator('main').innerText();
    for (const p of ['stripe', 'github']) check(text.includes(p), `no ${p} row`);
    check(await page.locator('main svg').count() === 2, 'not two charts');
    check(await page.locator('svg polyline').count() >= 4, 'chart lines missing');
    check((await page.locator('#duprate').innerText()).endsWith('%'), 'no duplicate rate');
    check(await page.locator('#dead').innerText() === String(cfg.dead), `dead letters ${await page.locator('#dead').innerText()} != ${cfg.dead}`);
    check(/store size: [0-9.]+ (KiB|MiB)/.test(text), 'no store size');
    check(/last delivery/.test(text) && /ago\)/.test(text), 'no last delivery');
    if (cfg.screenshot) await page.screenshot({ path: cfg.screenshot, fullPage: true });
  });

  await step('events: newest first, paged by 50, Older link reaches the rest', async () => {
    await page.goto(base + '/events');
    const rows = page.locator('#events tr a.ev');
    check(await rows.count() === 50, `first page has ${await rows.count()} rows`);
    const first = await page.locator('#events tr').nth(1).locator('a.ev').innerText();
    check(first === cfg.newest, `newest first: ${first} != ${cfg.newest}`);
    await page.click('#older');
    const n2 = await rows.count();
    check(n2 === cfg.total - 50, `second page has ${n2} rows, want ${cfg.total - 50}`);
    check(await page.locator('#older').count() === 0, 'an Older link past the oldest event');
  });

  await step('filters: provider, status, type pattern and search through the form', async () => {
    await page.goto(base + '/events');
    await page.selectOption('select[name=provider]', 'github');
    await page.click('form.filter button');
    check(page.url().includes('provider=github'), 'form did not filter by provider: ' + page.url());
    const gh = await page.locator('#events a.ev').allInnerTexts();
    check(gh.length === cfg.github && gh.every(t => t.startsWith('4242:gh-')), `github rows: ${gh}`);
    await page.goto(base + '/events');
    await page.selectOption('select[name=status]', 'dead');
    await page.click('form.filter button');
    const dead = await page.locator('#events a.ev').allInnerTexts();
    check(dead.length === cfg.dead, `dead rows: ${dead}`);
    await page.goto(base + '/events');
    await page.fill('input[name=type]', 'payment_intent.payment_*');
    await page.click('form.filter button');
    const types = await page.locator('#events tr td:nth-child(5)').allInnerTexts();
    check(types.length === cfg.deadStripe && types.every(t => t === 'payment_intent.payment_failed'), `type filter: ${types}`);
    await page.goto(base + '/events');
    await page.fill('input[name=q]', 'hostile');
    await page.click('form.filter button');
    const h = await page.locator('#events a.ev').allInnerTexts();
    check(h.length === 1 && h[0] === cfg.hostile, `search: ${h}`);
  });

  await step('hostile payload </pre><script> shown as text, no script runs', async () => {
    await page.goto(base + '/events?q=hostile');
    await page.click('#events a.ev');
    const shown = await page.locator('#payload').innerText();
    check(shown.includes('</pre><script>'), 'payload text not shown literally');
    check(await page.locator('script').count() === 0, 'a script element made it into the page');
    check(await page.locator('img').count() === 0, 'an img element made it into the page');
    const pwned = await page.evaluate(() => window.__pwned === undefined && !document.title.includes('PWNED'));
    check(pwned, 'the payload\'s script ran');
    check(dialogs.length === 0, 'a dialog opened');
    const hd = await page.locator('#headers').innerText();
    check(/stripe-signature: \(hidden\)/i.test(hd) && !/v1=/.test(hd), 'signature header shown: ' + hd);
  });

  await step('event id with a slash and a space opens by its encoded URL', async () => {
    const r = await page.goto(base + '/events/stripe/' + encodeURIComponent(cfg.oddId));
    check(r.status() === 200, `status ${r.status()}`);
    check((await page.locator('#meta').innerText()).includes(cfg.oddId), 'wrong event');
  });

  await step('replay: clicking Replay on a dead event makes it due again', async () => {
    await page.goto(base + '/events/stripe/' + encodeURIComponent(cfg.replayId));
    check(await page.locator('#status').innerText() === 'dead', 'not dead before replay');
    check(await page.locator('#attempts tr').count() >= 2, 'no attempt shown');
    await page.click('button:has-text("Replay")');
    await page.waitForSelector('#replayed');
    const st = await page.locator('#status').innerText();
    check(st === 'received', `status after replay: ${st}`);
    console.log('# data ' + JSON.stringify({ replayed: cfg.replayId }));
  });

  await step('CSRF: a POST without the token, or with a cross-site Origin, gets 403 and changes nothing', async () => {
    await page.goto(base + '/events/stripe/' + encodeURIComponent(cfg.keepId));
    const token = await tokenOf(page);
    const form = { provider: 'stripe', event_id: cfg.keepId };
    let r = await ctx.request.post(base + '/replay', { form, headers: { Origin: origin }, maxRedirects: 0 });
    check(r.status() === 403 && (await r.text()).includes('bad_csrf_token'), `no token: ${r.status()}`);
    checkHeaders(r, 'refusal');
    r = await ctx.request.post(base + '/replay', { form: { ...form, csrf: token }, headers: { Origin: 'https://evil.example' }, maxRedirects: 0 });
    check(r.status() === 403 && (await r.text()).includes('cross_origin'), `cross-origin: ${r.status()}`);
    r = await ctx.request.post(base + '/replay', { form: { ...form, csrf: token }, headers: { Origin: 'null', 'Sec-Fetch-Site': 'cross-site' }, maxRedirects: 0 });
    check(r.status() === 403, `Sec-Fetch-Site cross-site: ${r.status()}`);
    r = await ctx.request.get(base + '/replay?provider=stripe&event_id=' + encodeURIComponent(cfg.keepId) + '&csrf=' + token);
    check(r.status() === 405, `GET replay: ${r.status()}`);
    await page.reload();
    check(await page.locator('#status').innerText() === 'dead', 'the refused POSTs changed the event');
  });

  await step('bulk replay: a dry run counts, the confirmed POST replays', async () => {
    await page.goto(base + '/events?provider=stripe&status=dead');
    await page.click('button:has-text("Count events to replay")');
    check(await page.locator('#count').innerText() === '1', 'dry run count ' + await page.locator('#count').innerText());
    await page.goto(base + '/events/stripe/' + encodeURIComponent(cfg.keepId));
    check(await page.locator('#status').innerText() === 'dead', 'the dry run changed the event');
    await page.goto(base + '/events?provider=stripe&status=dead');
    await page.click('button:has-text("Count events to replay")');
    await page.click('button:has-text("Replay 1 event")');
    check(await page.locator('#count').innerText() === '1', 'replayed count');
    await page.goto(base + '/events/stripe/' + encodeURIComponent(cfg.keepId));
    check(await page.locator('#status').innerText() === 'received', 'bulk replay did not make it due');
    console.log('# data ' + JSON.stringify({ bulk: cfg.keepId }));
  });

  await step('no JavaScript needed: the pages and the filter form work with it off', async () => {
    const c2 = await browser.newContext({ httpCredentials: creds, javaScriptEnabled: false });
    const p2 = await c2.newPage();
    await p2.goto(base + '/events');
    await p2.selectOption('select[name=provider]', 'github');
    await p2.click('form.filter button');
    check(await p2.locator('#events a.ev').count() === cfg.github, 'filter without JavaScript');
    await c2.close();
  });

  await step('401 with WWW-Authenticate: Basic without credentials, and with wrong ones', async () => {
    // Headless chromium turns a 401 it cannot prompt for into a network
    // error: the answer itself is taken from the response event.
    async function load(context, url) {
      const p = await context.newPage();
      const seen = p.waitForResponse(r => r.url() === url);
      await p.goto(url).catch(() => null);
      const r = await seen;
      return { r, body: await r.text() };
    }
    const anon = await browser.newContext();
    let { r, body } = await load(anon, base + '/');
    check(r.status() === 401, `no credentials: ${r.status()}`);
    check(/^Basic /.test(r.headers()['www-authenticate'] || ''), 'no WWW-Authenticate: Basic');
    checkHeaders(r, '401');
    check(!body.includes('evt_') && !body.includes('stripe'), 'a 401 page shows data');
    await anon.close();
    const wrong = await browser.newContext({ httpCredentials: { username: cfg.user, password: 'wrong' + cfg.password } });
    ({ r } = await load(wrong, base + '/events'));
    check(r.status() === 401, `wrong password: ${r.status()}`);
    await wrong.close();
  });

  await step('framing refused: the page will not load in a cross-origin frame', async () => {
    const c5 = await browser.newContext({ httpCredentials: creds });
    const p5 = await c5.newPage();
    await p5.setContent(`<iframe id="f" src="${base}/"></iframe>`);
    await p5.waitForTimeout(500);
    const inner = p5.frames().find(f => f.url().startsWith(base));
    let loaded = false;
    if (inner) loaded = await inner.locator('h1').count().catch(() => 0) > 0;
    check(!loaded, 'the console rendered inside a frame');
    await c5.close();
  });
  await ctx.close();
}

async function phaseReadonly(browser, creds) {
  const ctx = await browser.newContext({ httpCredentials: creds });
  const page = await ctx.newPage();
  await step('readonly: no form on any page, a POST is refused', async () => {
    for (const u of ['/', '/events', '/events/github/' + encodeURIComponent(cfg.deadId)]) {
      const r = await page.goto(base + u);
      check(r.status() === 200, `${u}: ${r.status()}`);
      check(await page.locator('form[method=post]').count() === 0, `${u} has a POST form`);
      check(await page.locator('button:has-text("Replay")').count() === 0, `${u} has a Replay button`);
    }
    check((await page.locator('header').innerText()).includes('read-only'), 'not marked read-only');
    const r = await ctx.request.post(base + '/replay', { form: { provider: 'stripe', event_id: cfg.deadId, csrf: 'x' }, headers: { Origin: origin } });
    check(r.status() === 403 && (await r.text()).includes('readonly'), `POST: ${r.status()}`);
    checkHeaders(r, 'readonly refusal');
  });
  await ctx.close();
}

async function phaseServerAuth(browser, creds) {
  await step('AUTH=server under Apache: .htpasswd credentials sign in', async () => {
    const ctx = await browser.newContext({ httpCredentials: creds });
    const page = await ctx.newPage();
    const r = await page.goto(base + '/');
    check(r.status() === 200, `status ${r.status()}`);
    checkHeaders(r, 'apache overview');
    check((await page.locator('header').innerText()).includes('signed in as ' + cfg.user), 'REMOTE_USER not shown');
    await page.goto(base + '/events');
    check(await page.locator('#events a.ev').count() >= 1, 'no events under Apache');
    await ctx.close();
  });
  await step('AUTH=server under Apache: without credentials Apache answers 401', async () => {
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    const seen = page.waitForResponse(r => r.url() === base + '/events');
    await page.goto(base + '/events').catch(() => null);
    const r = await seen;
    check(r.status() === 401, `status ${r.status()}`);
    check(!(await r.text()).includes('evt_apache'), 'data without credentials');
    await ctx.close();
  });
}

main().then(() => process.exit(failed ? 1 : 0), e => {
  notOk('run', e && e.stack ? e.stack : e);
  process.exit(1);
});
