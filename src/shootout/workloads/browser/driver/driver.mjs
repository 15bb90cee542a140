// shootout browser driver: one trial, run inside the target under the target's own node.
//
//   node driver.mjs '<plan JSON>'
//
// It launches the target's own Chromium (a fresh profile, the plan's flags, the DevTools
// protocol over a pipe, through puppeteer-core), runs the plan's sets of pages and prints
// `name value` lines. Sets:
//   startup  launch time, first contentful paint of the heavy page, renderers' peak RSS
//   todo     the to-do apps (todo-harness.js): per framework and step, sync and async ms
//            (medians over iterations), and the renderer main thread's CPU ms per iteration
//            from one call that runs them all
//   engine   the JavaScript kernels (engine.js): wall and CPU ms for a number of runs (the
//            medians of several such samples), and their check
//   todo and engine also print the CPU ms of their measuring path alone (`..._harness_cpu_ms`:
//            the same call with no work in it), which metrics.py subtracts
//   tabs     N tabs of the heavy page, then switches between them: each switch's latency
// A crash, an out-of-memory kill, a page that throws or logs an error, or the time limit
// ends the trial with one line `error: ...` on stderr and exit status 2. Chromium never
// outlives the driver: it is closed, its process group killed and waited for, and setpriv's
// parent-death signal kills it if the driver itself is killed; the driver ends the trial
// when its own parent, the runner, is gone.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import puppeteer from "puppeteer-core";

const plan = JSON.parse(process.argv[2] ?? "{}");
const out = (name, value) => process.stdout.write(`${name} ${value}\n`);
let browser = null;
let profile = null;
let current = "launch";
let failure = null; // the first reason this trial failed; later errors are its consequences

let finishing = false;
// The first reason wins; a fatal one (a crash, a page error) ends the trial at once, since
// what is in flight would only wait for a page that is gone.
const fail = (reason, fatal = false) => {
  if (finishing) return;
  failure ??= reason;
  if (fatal) finish(2);
};
const check = () => { if (failure) throw new Error(failure); };
const fileUrl = (p) => pathToFileURL(p).href;
// The median: one descheduling by another process on a shared machine does not rule a trial.
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };

// -- processes, read from /proc (inside the target, where Chromium runs) ----------------------

function processes() {
  const found = new Map();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8");
      const status = readFileSync(`/proc/${name}/status`, "utf8");
      const kb = (key) => Number((status.match(new RegExp(`^${key}:\\s+(\\d+) kB`, "m")) ?? [0, 0])[1]);
      found.set(Number(name), { ppid, type: (cmdline.match(/--type=([a-z-]+)/) ?? [0, "browser"])[1],
                                ours: profile !== null && cmdline.includes(`--user-data-dir=${path.join(profile, "data")}`),
                                hwm: kb("VmHWM") });
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}

/** The browser's descendants that are renderers: [{pid, hwm}], hwm = peak RSS in kB. */
function renderers() {
  const all = processes();
  // The browser is found by its profile, not by the pid puppeteer saw: in a target that runs
  // commands in a PID namespace of their own, /proc may show the pids of the machine's.
  const root = [...all.entries()].find(([, p]) => p.ours && p.type === "browser")?.[0];
  const inTree = (pid) => { for (let p = pid, n = 0; p > 1 && n < 64; p = all.get(p)?.ppid ?? 0, n++) if (p === root) return true; return false; };
  return [...all.entries()].filter(([pid, p]) => p.type === "renderer" && inTree(pid)).map(([pid, p]) => ({ pid, ...p }));
}

// -- the browser ---------------------------------------------------------------------------------

async function launch() {
  // a short name: Chromium's singleton socket lands in TMPDIR (below), and a socket's path
  // may not exceed 107 bytes
  profile = mkdtempSync(path.join(plan.scratch, "p"));
  // Chromium's singleton socket: TMPDIR/.org.chromium.Chromium.XXXXXX/SingletonSocket, at most
  // 107 bytes (sun_path); longer, the browser dies while starting with only "Target closed"
  const socket = path.join(profile, ".org.chromium.Chromium.XXXXXX", "SingletonSocket");
  if (Buffer.byteLength(socket) > 107) {
    throw new Error(`the work directory's path is too long for Chromium's singleton socket (${socket}: ` +
                    `${Buffer.byteLength(socket)} bytes, at most 107)`);
  }
  const home = path.join(profile, "home");
  // Chromium's own messages go to a file of the profile: a browser that dies while it starts
  // is reported with its last words, not only with puppeteer's "Target closed"
  const said = path.join(profile, "chromium.stderr");
  const options = {
    // setpriv: Chromium gets SIGKILL when this driver dies, whatever kills it
    executablePath: "/bin/sh",
    ignoreDefaultArgs: true,
    args: ["-c", 'exec 2>>"$0"; exec /usr/bin/setpriv --pdeathsig KILL -- "$@"', said,
           plan.chromium, ...plan.flags, `--user-data-dir=${path.join(profile, "data")}`, "about:blank"],
    pipe: true,
    // SHOOTOUT_TREE: the trial's marker (execution/tree.py), so that its runner finds and waits
    // for the processes Chromium starts in sessions of their own (its crash handlers)
    env: { PATH: process.env.PATH, LC_ALL: "C", HOME: home, XDG_CONFIG_HOME: home, XDG_CACHE_HOME: home, TMPDIR: profile,
           ...(process.env.SHOOTOUT_TREE ? { SHOOTOUT_TREE: process.env.SHOOTOUT_TREE } : {}) },
    defaultViewport: null,
    timeout: plan.timeout_ms,
    protocolTimeout: plan.timeout_ms,
  };
  try {
    browser = await puppeteer.launch(options);
  } catch (err) {
    throw new Error(`${String(err?.message ?? err).split("\n")[0]}; Chromium's last words: ${lastWords(said)}`);
  }
  browser.on("disconnected", () => setTimeout(() => {
    const proc = browser.process(); // its exit status arrives just after the pipe closes
    const how = proc?.signalCode ? `killed by ${proc.signalCode}` : `exit status ${proc?.exitCode}`;
    fail(`the browser exited during ${current} (${how}${proc?.signalCode === "SIGKILL" ? ", out of memory?" : ""})`, true);
  }, 200));
  const session = await browser.target().createCDPSession();
  session.on("Target.targetCrashed", (e) => {
    const killed = e.status === "oom" || e.status === "killed";
    fail(`a renderer ${killed ? "was killed (out of memory?)" : "crashed"} during ${current} ` +
         `(status ${e.status}, code ${e.errorCode})`, true);
  });
  await session.send("Target.setDiscoverTargets", { discover: true });
}

function watch(page, what) {
  page.on("pageerror", (err) => fail(`${what} threw: ${String(err.message ?? err).split("\n")[0]}`, true));
  page.on("console", (msg) => { if (msg.type() === "error") fail(`${what} logged an error: ${msg.text().split("\n")[0]}`, true); });
  // the browser's Target.targetCrashed says more (its status); this is the fallback
  page.on("error", () => setTimeout(() => fail(`the renderer of ${what} crashed during ${current}`, true), 500));
  return page;
}

async function open(url, what, page = null) {
  page = watch(page ?? await browser.newPage(), what);
  await page.goto(url, { waitUntil: "load", timeout: plan.timeout_ms });
  check();
  return page;
}

async function close() {
  const proc = browser?.process();
  if (browser) {
    await Promise.race([browser.close().catch(() => {}), new Promise((r) => setTimeout(r, 10000))]);
  }
  if (proc?.pid) {
    // puppeteer starts Chromium in a session of its own: its zygotes, renderers and helpers
    // are in its process group, which may outlive the browser itself by a moment
    try { process.kill(-proc.pid, "SIGKILL"); } catch { /* already gone */ }
    await groupGone(proc.pid, 10000);
  }
  if (profile) rmSync(profile, { recursive: true, force: true });
}

/** The last lines a file holds, on one line (at most 400 characters); "none" if it holds none. */
function lastWords(file) {
  let text = "";
  try { text = readFileSync(file, "utf8"); } catch { /* never written */ }
  const lines = text.split("\n").map((l) => l.trim()).filter(Boolean).slice(-3);
  return lines.length ? lines.join(" | ").slice(-400) : "none";
}

/** Resolves once no live process is in the process group (or after ms). */
async function groupGone(pgid, ms) {
  const deadline = performance.now() + ms;
  const alive = () => readdirSync("/proc").some((name) => {
    if (!/^\d+$/.test(name)) return false;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return Number(fields[2]) === pgid && fields[0] !== "Z";
    } catch {
      return false; // ended while we looked
    }
  });
  while (alive() && performance.now() < deadline) {
    try { process.kill(-pgid, "SIGKILL"); } catch { /* the group emptied meanwhile */ }
    await new Promise((r) => setTimeout(r, 10));
  }
}

// -- the sets ----------------------------------------------------------------------------------

// Resolves to the start time of the first contentful paint (ms after navigation start).
const firstPaint = () => new Promise((resolve) => {
  const find = () => performance.getEntriesByName("first-contentful-paint")[0];
  if (find()) return resolve(find().startTime);
  new PerformanceObserver(() => { if (find()) resolve(find().startTime); }).observe({ type: "paint", buffered: true });
});

async function startup(t0) {
  current = "startup";
  const [first] = await browser.pages();
  out("launch_ms", performance.now() - t0);
  const page = await open(fileUrl(plan.heavy), "the heavy page", first);
  out("first_paint_ms", await page.evaluate(firstPaint));
  await page.evaluate(() => window.heavyReady);
  check();
  const found = renderers();
  out("renderer_peak_kb", Math.max(0, ...found.map((r) => r.hwm)));
  out("renderers", found.length);
  await page.goto("about:blank");
}

// CPU time the page's renderer main thread has used (ms), from Chromium's own accounting:
// the thread where the page's JavaScript, style and layout run. Unlike the wall clock it
// does not count the time other processes of a busy machine held the CPU.
async function cpuClock(page) {
  const session = await page.createCDPSession();
  await session.send("Performance.enable");
  return async () => {
    const { metrics } = await session.send("Performance.getMetrics");
    const thread = metrics.find((m) => m.name === "ThreadTime");
    if (!thread) throw new Error("this Chromium reports no ThreadTime in Performance.getMetrics");
    return 1000 * thread.value;
  };
}

async function todo({ frameworks, items, iterations, warmup }) {
  for (const name of frameworks) {
    current = `todo ${name}`;
    const page = await open(fileUrl(path.join(plan.site, `todo-${name}.html`)), `the ${name} to-do app`);
    const cpu = await cpuClock(page);
    const call = (n, w) => page.evaluate((o) => window.runTodo(o), { items, iterations: n, warmup: w });
    await call(0, warmup);
    // One call runs every timed iteration, the clock read before and after it: the DevTools
    // round trips (the call, its result, two readings of the clock, all on the renderer's main
    // thread) are paid once per app, not once per iteration.
    const c0 = await cpu();
    const runs = await call(iterations, 0);
    const cpuMs = await cpu() - c0;
    check();
    for (const stepName of ["add", "complete", "delete"]) {
      for (const [k, part] of [[0, "sync"], [1, "async"]]) {
        out(`todo_${name}_${stepName}_${part}_ms`, median(runs.map((r) => r[stepName][k])));
      }
    }
    out(`todo_${name}_cpu_ms`, cpuMs / iterations);
    out(`todo_${name}_iterations`, iterations);
    out(`todo_${name}_harness_cpu_ms`, await harness(cpu, () => call(0, 0)));
    await page.close();
  }
}

// The CPU time of the measuring path alone: the same call and readings of the clock, with no
// page work in the call (median of 5). It is subtracted, once per measured call, in metrics.py.
async function harness(cpu, empty) {
  const ms = [];
  for (let i = 0; i < 5; i++) {
    const c0 = await cpu();
    await empty();
    ms.push(await cpu() - c0);
  }
  return median(ms);
}

async function engine({ kernels, samples }) {
  current = "engine";
  const page = await open(fileUrl(path.join(plan.site, "engine.html")), "the engine page");
  const cpu = await cpuClock(page);
  for (const [name, [runs, size]] of Object.entries(kernels)) {
    current = `engine ${name}`;
    await page.evaluate((n, s) => window.runKernel(n, 1, s), name, size); // warm-up: compile and optimise
    const wall = [];
    const cpuMs = [];
    let result = null;
    for (let i = 0; i < samples; i++) {
      const c0 = await cpu();
      result = await page.evaluate((n, k, s) => window.runKernel(n, k, s), name, runs, size);
      cpuMs.push(await cpu() - c0);
      wall.push(result.ms);
    }
    check();
    out(`engine_${name}_ms`, median(wall));
    out(`engine_${name}_cpu_ms`, median(cpuMs));
    out(`engine_${name}_runs`, runs);
    out(`engine_${name}_check`, result.check);
    out(`engine_${name}_harness_cpu_ms`, await harness(cpu, () => page.evaluate((n, s) => window.runKernel(n, 0, s), name, size)));
  }
  await page.close();
}

// Scroll somewhere new, lay out, and wait for two frames: the tab is on screen and current.
const touch = (fraction) => new Promise((resolve) => {
  window.scrollTo(0, Math.floor(fraction * Math.max(0, document.documentElement.scrollHeight - innerHeight)));
  document.body.getBoundingClientRect();
  requestAnimationFrame(() => requestAnimationFrame(() => resolve()));
});

async function tabs({ count, switches, seed }) {
  current = "tabs: opening";
  const [first] = await browser.pages();
  const pages = [];
  const t0 = performance.now();
  for (let i = 0; i < count; i++) {
    const page = await open(fileUrl(plan.heavy), `tab ${i + 1}`, i === 0 ? first : null);
    await page.evaluate(() => window.heavyReady);
    pages.push(page);
  }
  out("tab_open_ms", (performance.now() - t0) / count);
  let state = seed >>> 0;
  const random = () => { state = (Math.imul(state, 1664525) + 1013904223) >>> 0; return state / 4294967296; };
  let at = count - 1;
  for (let s = 0; s < switches; s++) {
    current = `tabs: switch ${s + 1}`;
    let to = Math.floor(random() * (count - 1));
    if (to >= at) to++; // never the tab already in front
    const t = performance.now();
    await pages[to].bringToFront();
    await pages[to].evaluate(touch, random());
    out(`switch_${s}_ms`, performance.now() - t);
    check();
    at = to;
  }
  const found = renderers();
  out("renderers_peak_kb_sum", found.reduce((s, r) => s + r.hwm, 0));
  out("renderers", found.length);
}

// -- the trial -----------------------------------------------------------------------------------

// A runner killed with SIGKILL cannot stop its trial: the driver is re-parented then, and ends
// the trial (its browser too) at once rather than at its time limit.
const parent = process.ppid;
setInterval(() => { if (process.ppid !== parent) fail("the runner that started this trial is gone", true); }, 250).unref();

async function main() {
  const limit = setTimeout(() => fail(`timed out after ${plan.timeout_ms / 1000} s during ${current}`, true),
                           plan.timeout_ms);
  const t0 = performance.now();
  await launch();
  check();
  if (plan.sets.includes("startup")) await startup(t0);
  if (plan.sets.includes("todo")) await todo(plan.todo);
  if (plan.sets.includes("engine")) await engine(plan.engine);
  if (plan.sets.includes("tabs")) await tabs(plan.tabs);
  check();
  clearTimeout(limit);
}

async function finish(code) {
  if (finishing) return;
  finishing = true;
  await close();
  if (code !== 0) process.stderr.write(`error: ${(failure ?? "unknown failure").replace(/\s+/g, " ")}\n`);
  process.exit(code);
}

main().then(() => finish(failure ? 2 : 0), async (err) => {
  // A dying browser or renderer fails the call in flight first: give the event that says
  // why (disconnected, targetCrashed) a moment to be the reason.
  await new Promise((resolve) => setTimeout(resolve, 500));
  fail(`${String(err?.message ?? err).split("\n")[0]} (during ${current})`);
  return finish(2);
});
