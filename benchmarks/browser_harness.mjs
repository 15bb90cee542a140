// benchmarks/browser_harness.py runs this inside a userspace: where the browser workload's time
// goes (the page's work or the measuring path's), the json kernel's parts, the timer's
// resolution; with plan.trace_opt, V8's --trace-opt while the kernels warm up instead.
import { mkdtempSync, rmSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import puppeteer from "puppeteer-core";
const plan = JSON.parse(process.argv[2]);
const out = (k, v) => process.stdout.write(`${k} ${typeof v === "number" ? v.toFixed(3) : v}\n`);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const profile = mkdtempSync(path.join(plan.scratch, "q"));
const browser = await puppeteer.launch({ executablePath: plan.chromium, ignoreDefaultArgs: true, pipe: true,
  dumpio: Boolean(plan.trace_opt),
  args: [...plan.flags, ...(plan.trace_opt ? ["--js-flags=--trace-opt"] : []), `--user-data-dir=${profile}/d`, "about:blank"],
  defaultViewport: null,
  env: { PATH: process.env.PATH, HOME: profile, TMPDIR: profile, LC_ALL: "C" }, protocolTimeout: 600000 });
try {
  async function cpuClock(page) {
    const s = await page.createCDPSession(); await s.send("Performance.enable");
    return async () => 1000 * (await s.send("Performance.getMetrics")).metrics.find((m) => m.name === "ThreadTime").value;
  }
  if (plan.trace_opt) {
    const page = await browser.newPage();
    await page.goto(pathToFileURL(path.join(plan.site, "engine.html")).href, { waitUntil: "load" });
    for (const [k, s] of [["raytrace", 100], ["splay", 5000], ["json", 1000]]) {
      for (let i = 0; i < 5; i++) await page.evaluate((n, s) => window.runKernel(n, 1, s), k, s);
    }
    plan.sets = [];
  }
  const N = plan.n ?? 15;
  if (plan.sets.length) {
    const page = await browser.newPage();
    await page.goto(pathToFileURL(path.join(plan.site, "engine.html")).href, { waitUntil: "load" });
    out("timer_resolution_ms", await page.evaluate(() => { let min = Infinity, last = performance.now();
      for (let i = 0; i < 2e6; i++) { const t = performance.now(); if (t > last) { min = Math.min(min, t - last); last = t; } } return min; }));
    out("cross_origin_isolated", await page.evaluate(() => String(self.crossOriginIsolated)));
    await page.close();
  }
  if (plan.sets.includes("todo")) for (const name of plan.frameworks) {
    const page = await browser.newPage();
    await page.goto(pathToFileURL(path.join(plan.site, `todo-${name}.html`)).href, { waitUntil: "load" });
    const cpu = await cpuClock(page);
    await page.evaluate((o) => window.runTodo(o), { items: 100, iterations: 0, warmup: 3 });
    const per = [], steps = [], inpage = [], empty = [], emptyStep = [];
    for (let i = 0; i < N; i++) {
      const c0 = await cpu();
      const r = await page.evaluate(async (o) => { const t = performance.now(); const x = await window.runTodo(o); return { x, t: performance.now() - t }; }, { items: 100, iterations: 1, warmup: 0 });
      per.push(await cpu() - c0);
      const it = r.x[0]; steps.push(sum(["add", "complete", "delete"].flatMap((s) => it[s]))); inpage.push(r.t);
      const e0 = await cpu(); await page.evaluate(() => 0); empty.push(await cpu() - e0);
      emptyStep.push(await page.evaluate(async () => {
        const ch = new MessageChannel(); let w; ch.port1.onmessage = () => w();
        const t0 = performance.now();
        for (let k = 0; k < 3; k++) { await new Promise((r) => { w = r; ch.port2.postMessage(0); }); document.querySelector(".todoapp").getBoundingClientRect(); }
        return performance.now() - t0; }));
    }
    const b0 = await cpu();
    const batch = await page.evaluate((o) => window.runTodo(o), { items: 100, iterations: N, warmup: 0 });
    const batchCpu = (await cpu() - b0) / N;
    const batchSteps = median(batch.map((it) => sum(["add", "complete", "delete"].flatMap((s) => it[s]))));
    out(`${name}_cpu_per_eval_ms`, median(per)); out(`${name}_inpage_steps_ms`, median(steps));
    out(`${name}_inpage_total_ms`, median(inpage)); out(`${name}_empty_eval_cpu_ms`, median(empty));
    out(`${name}_empty_3steps_wall_ms`, median(emptyStep));
    out(`${name}_batch_cpu_per_iter_ms`, batchCpu); out(`${name}_batch_steps_ms`, batchSteps);
    await page.close();
  }
  if (plan.sets.includes("engine")) {
    const page = await browser.newPage();
    await page.goto(pathToFileURL(path.join(plan.site, "engine.html")).href, { waitUntil: "load" });
    const cpu = await cpuClock(page);
    for (const [k, [runs, size]] of Object.entries(plan.kernels)) {
      await page.evaluate((n, s) => window.runKernel(n, 1, s), k, size);
      const c = [], w = [];
      for (let i = 0; i < 5; i++) { const c0 = await cpu(); const r = await page.evaluate((n, r, s) => window.runKernel(n, r, s), k, runs, size); c.push(await cpu() - c0); w.push(r.ms); }
      out(`kernel_${k}_cpu_ms`, median(c)); out(`kernel_${k}_inpage_ms`, median(w));
    }
    // the json kernel's parts, in-page wall time per part (median of 7), on variants of its document
    const parts = await page.evaluate((size) => {
      const WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango"];
      function rng(seed) { let a = seed >>> 0; return () => { a = (a + 0x6d2b79f5) >>> 0; let t = Math.imul(a ^ (a >>> 15), a | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return ((t ^ (t >>> 14)) >>> 0) / 4294967296; }; }
      const doc = (variant) => { const random = rng(4); const records = [];
        const num = (x, scale) => variant === "ints" ? Math.round(x * scale) : x;
        for (let i = 0; i < size; i++) records.push({ id: i, name: WORDS[i % 20] + "-" + ((random() * 1e6) | 0), active: random() < 0.5,
          score: num(((random() * 1e6) | 0) / 1000, 1000), tags: [WORDS[(random() * 20) | 0], WORDS[(random() * 20) | 0]],
          address: { street: `${(random() * 999) | 0} ${WORDS[i % 20]} road`, zip: String((random() * 1e5) | 0).padStart(5, "0"),
            geo: { lat: num(((random() * 180e4) | 0) / 1e4 - 90, 1e4), lon: num(((random() * 360e4) | 0) / 1e4 - 180, 1e4) } },
          history: Array.from({ length: 1 + ((random() * 5) | 0) }, (_, k) => ({ at: 1700000000 + k * 86400, value: (random() * 100) | 0, note: null })) });
        return { version: 3, generated: "shootout", records }; };
      const time = (f) => { const ts = []; for (let i = 0; i < 9; i++) { const t = performance.now(); f(); ts.push(performance.now() - t); } ts.sort((a, b) => a - b); return ts[4]; };
      const res = {};
      for (const v of ["doubles", "ints"]) {
        const d = doc(v); const text = JSON.stringify(d); let back;
        res[`${v}_gen`] = time(() => doc(v));
        res[`${v}_stringify`] = time(() => JSON.stringify(d));
        res[`${v}_parse`] = time(() => { back = JSON.parse(text); });
        res[`${v}_walk`] = time(() => { let c = 0; for (const r of back.records) { c += r.history.length + (r.active ? 1 : 0) + r.tags[0].length; c += Math.round(r.score * 1000) + Math.round(r.address.geo.lat * 1e4); } return c; });
        res[`${v}_bytes`] = text.length;
      }
      const ds = []; const r = rng(9); for (let i = 0; i < 30000; i++) ds.push(((r() * 360e4) | 0) / 1e4 - 180);
      const strs = ds.map(String);
      res.num_to_string_30k = time(() => { let n = 0; for (const x of ds) n += String(x).length; return n; });
      res.string_to_num_30k = time(() => { let n = 0; for (const s of strs) n += Number(s); return n; });
      const is = ds.map((x) => Math.round(x * 1e4)); const istrs = is.map(String);
      res.int_to_string_30k = time(() => { let n = 0; for (const x of is) n += String(x).length; return n; });
      res.string_to_int_30k = time(() => { let n = 0; for (const s of istrs) n += Number(s); return n; });
      return res;
    }, plan.json_size ?? 4000);
    for (const [k, v] of Object.entries(parts)) out(`json_${k}`, v);
    await page.close();
  }
} finally {
  await browser.close(); rmSync(profile, { recursive: true, force: true });
}
