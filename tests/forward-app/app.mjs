// The application idemhook stands in front of, for tests/e2e/test_forward.py:
// one webhook route per provider, each verified with the provider's own
// official library (Stripe's constructEvent, @octokit/webhooks-methods,
// standardwebhooks) or, where none exists (Shopify, Asaas), with node's
// crypto as their documentation says.  Every request is appended to a
// JSON-lines journal: what came, whether it verified, what was answered.
//
// Usage: node app.mjs PORT JOURNAL SECRETS.json
// The test steers the answers with POST /control {"route": ..., "plan": [...]}:
// each delivery to the route takes the next step of its plan ("ok", "500",
// "400", "429:SECONDS", "slow:MS", "hang", "echo": a 500 that prints the
// route's secret), then "ok" once the plan is used up.
import { createServer } from 'node:http';
import { appendFileSync, readFileSync } from 'node:fs';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createRequire } from 'node:module';
import { verify as githubVerify } from '@octokit/webhooks-methods';

const require = createRequire(import.meta.url);
const Stripe = require('stripe');
const { Webhook } = require('standardwebhooks');

const [port, journal, secretsFile] = process.argv.slice(2);
const secrets = JSON.parse(readFileSync(secretsFile, 'utf8'));
const stripe = new Stripe('sk_test_forward_app_never_used');
const plans = {};

// rec.at is when the request came, rec.end when it was answered: the
// tests count the deliveries in flight from them.
function note(rec) {
  rec.end = Date.now();
  appendFileSync(journal, JSON.stringify(rec) + '\n');
}

async function verify(route, raw, h) {
  const text = raw.toString('utf8');
  switch (route) {
    case 'stripe':
    case 'stripe-acme': {
      // Throws on a bad signature or a timestamp older than 300 s.
      const ev = stripe.webhooks.constructEvent(raw, h['stripe-signature'], secrets[route]);
      return { id: ev.id, object: ev.data && ev.data.object && ev.data.object.id };
    }
    case 'github': {
      if (!(await githubVerify(secrets.github, text, h['x-hub-signature-256'] || '')))
        throw new Error('github signature does not verify');
      return { id: h['x-github-delivery'], event: h['x-github-event'] };
    }
    case 'standard':
    case 'stripe-sw': {
      const ev = new Webhook(secrets[route]).verify(text, h);
      return { id: h['webhook-id'], type: ev.type };
    }
    case 'shopify': {
      // https://shopify.dev/docs/apps/build/webhooks/subscribe/https#step-5-verify-the-webhook
      const want = createHmac('sha256', secrets.shopify).update(raw).digest();
      const got = Buffer.from(h['x-shopify-hmac-sha256'] || '', 'base64');
      if (got.length !== want.length || !timingSafeEqual(got, want))
        throw new Error('shopify hmac does not verify');
      return { id: h['x-shopify-webhook-id'], topic: h['x-shopify-topic'] };
    }
    case 'asaas': {
      // https://docs.asaas.com/docs/about-webhooks: the token, as configured.
      const got = Buffer.from(h['asaas-access-token'] || '');
      const want = Buffer.from(secrets.asaas);
      if (got.length !== want.length || !timingSafeEqual(got, want))
        throw new Error('asaas token does not match');
      const ev = JSON.parse(text);
      return { id: ev.id, object: ev.payment && ev.payment.id };
    }
    default:
      throw new Error('no such route');
  }
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    const raw = Buffer.concat(chunks);
    const route = req.url.replace(/^\/hooks\//, '');
    if (req.url === '/control') {
      const c = JSON.parse(raw.toString('utf8'));
      plans[c.route] = c.plan.slice();
      res.writeHead(200).end('{}');
      return;
    }
    const rec = { route, at: Date.now(), key: req.headers['idempotency-key'] || null };
    try {
      Object.assign(rec, await verify(route, raw, req.headers), { verified: true });
    } catch (e) {
      rec.verified = false;
      rec.error = String(e && e.message || e).slice(0, 200);
    }
    const step = (plans[route] || []).shift() || 'ok';
    rec.step = step;
    if (step === 'hang') {
      // Never answers: idemhook's timeout ends the attempt.
      rec.status = 0;
      note(rec);
      setTimeout(() => req.socket.destroy(), 15000);
      return;
    }
    const finish = () => {
      let status = 200;
      const headers = { 'Content-Type': 'text/plain' };
      if (!rec.verified) status = 400;
      else if (step === '500' || step === 'echo') status = 500;
      else if (step === '400') status = 400;
      else if (step.startsWith('429:')) {
        status = 429;
        headers['Retry-After'] = step.slice(4);
      }
      rec.status = status;
      note(rec);
      // "echo": a careless application that prints its secret back.
      const extra = step === 'echo' ? 'secret=' + secrets[route] : '';
      res.writeHead(status, headers).end(status === 200 ? 'thanks' :
        'no: "' + step + '"\n' + (rec.error || '') + extra);
    };
    if (step.startsWith('slow:')) setTimeout(finish, Number(step.slice(5)));
    else finish();
  });
});
server.listen(Number(port), '127.0.0.1', () => note({ route: '-', up: true, at: Date.now() }));
