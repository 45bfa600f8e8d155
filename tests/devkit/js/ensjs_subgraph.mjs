// Runs @ensdomains/ensjs's subgraph functions against a subgraph URL, as an application would.
// Input (stdin, JSON): { "url": "...", "chainId": n, "calls": [{ "fn": name, "args": {...},
// "allPages": bool }] }. Output (stdout, JSON): one entry per call, `{ "ok": result }` or
// `{ "error": message }`. With `allPages`, a listing is read page by page (ensjs's
// `previousPage`) until a page comes back short, and the pages are returned concatenated.
import { createPublicClient, http } from 'viem';
import * as subgraph from '@ensdomains/ensjs/subgraph';

let input = '';
process.stdin.on('data', (d) => (input += d));
process.stdin.on('end', async () => {
  const request = JSON.parse(input);
  const chain = {
    id: request.chainId,
    name: 'devnet',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: ['http://127.0.0.1:1'] } },
    subgraphs: { ens: { url: request.url } },
    contracts: {},
  };
  const client = createPublicClient({ chain, transport: http() });
  const results = [];
  for (const call of request.calls) {
    const fn = subgraph[call.fn];
    try {
      if (!call.allPages) {
        results.push({ ok: await fn(client, call.args) });
        continue;
      }
      const all = [];
      let pages = 0;
      let previousPage;
      for (;;) {
        const page = await fn(client, { ...call.args, previousPage });
        pages += 1;
        all.push(...page);
        if (page.length < call.args.pageSize || pages > 1000) break;
        previousPage = page;
      }
      results.push({ ok: { names: all, pages } });
    } catch (e) {
      results.push({ error: String(e && e.message ? e.message : e) });
    }
  }
  const json = JSON.stringify(results, (_, v) => (typeof v === 'bigint' ? v.toString() : v));
  process.stdout.write(json);
});
