// JavaScript engine kernels in the spirit of Octane and JetStream (written for shootout):
// pointer-heavy (splay tree, JSON), numeric (ray tracer, physics) and string work (regexp).
// window.runKernel(name, runs, size) runs one kernel `runs` times on a problem of `size`
// and resolves to {ms, check}: the check is the same number on every machine (integer
// arithmetic or only + - * / and sqrt on doubles, which IEEE 754 fixes), so every side of
// a comparison can be shown to have done the same work.
"use strict";

(() => {
  // mulberry32: a small deterministic generator; Math.imul keeps it in 32-bit integers.
  function rng(seed) {
    let a = seed >>> 0;
    return () => {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = Math.imul(a ^ (a >>> 15), a | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  // -- splay tree: top-down splaying, nodes carry a small object payload -------------------
  class Node {
    constructor(key, value) { this.key = key; this.value = value; this.left = null; this.right = null; }
  }

  class SplayTree {
    constructor() { this.root = null; this.size = 0; }

    splay(key) {
      if (this.root === null) return;
      const header = new Node(0, null);
      let left = header, right = header, t = this.root;
      for (;;) {
        if (key < t.key) {
          if (t.left === null) break;
          if (key < t.left.key) { const y = t.left; t.left = y.right; y.right = t; t = y; if (t.left === null) break; }
          right.left = t; right = t; t = t.left;
        } else if (key > t.key) {
          if (t.right === null) break;
          if (key > t.right.key) { const y = t.right; t.right = y.left; y.left = t; t = y; if (t.right === null) break; }
          left.right = t; left = t; t = t.right;
        } else break;
      }
      left.right = t.left; right.left = t.right; t.left = header.right; t.right = header.left;
      this.root = t;
    }

    insert(key, value) {
      if (this.root === null) { this.root = new Node(key, value); this.size++; return; }
      this.splay(key);
      if (this.root.key === key) return;
      const node = new Node(key, value);
      if (key > this.root.key) { node.left = this.root; node.right = this.root.right; this.root.right = null; }
      else { node.right = this.root; node.left = this.root.left; this.root.left = null; }
      this.root = node; this.size++;
    }

    find(key) { this.splay(key); return this.root !== null && this.root.key === key ? this.root : null; }

    remove(key) {
      this.splay(key);
      if (this.root === null || this.root.key !== key) return false;
      if (this.root.left === null) this.root = this.root.right;
      else { const right = this.root.right; this.root = this.root.left; this.splay(key); this.root.right = right; }
      this.size--;
      return true;
    }
  }

  function payload(random, depth) {
    return depth === 0 ? { id: (random() * 1e6) | 0, tag: "leaf" }
      : { array: [depth, depth + 1, depth + 2], child: payload(random, depth - 1), text: "node" + depth };
  }

  function splay(size) {
    const random = rng(1);
    const tree = new SplayTree();
    const keys = [];
    for (let i = 0; i < size; i++) { const k = (random() * 1e9) | 0; keys.push(k); tree.insert(k, payload(random, 3)); }
    let check = 0;
    for (let i = 0; i < 4 * size; i++) {
      const k = keys[(random() * keys.length) | 0];
      const found = tree.find(k);
      if (found !== null) check = (check + found.value.array[0] + (k & 0xff)) | 0;
      if (i % 4 === 0) { // churn: replace an old key with a fresh one
        const at = (random() * keys.length) | 0;
        if (tree.remove(keys[at])) { const fresh = (random() * 1e9) | 0; keys[at] = fresh; tree.insert(fresh, payload(random, 3)); }
      }
    }
    return (check + tree.size) >>> 0;
  }

  // -- ray tracer: spheres over a checkered plane, one light, shadows and reflections -----
  class Vec {
    constructor(x, y, z) { this.x = x; this.y = y; this.z = z; }
    add(v) { return new Vec(this.x + v.x, this.y + v.y, this.z + v.z); }
    sub(v) { return new Vec(this.x - v.x, this.y - v.y, this.z - v.z); }
    scale(s) { return new Vec(this.x * s, this.y * s, this.z * s); }
    dot(v) { return this.x * v.x + this.y * v.y + this.z * v.z; }
    norm() { return this.scale(1 / Math.sqrt(this.dot(this))); }
  }

  class Sphere {
    constructor(center, radius, color, mirror) { this.center = center; this.r2 = radius * radius; this.color = color; this.mirror = mirror; }
    hit(origin, dir) {
      const oc = this.center.sub(origin);
      const b = oc.dot(dir);
      const disc = b * b - oc.dot(oc) + this.r2;
      if (disc < 0) return Infinity;
      const root = Math.sqrt(disc);
      const t = b - root > 1e-6 ? b - root : b + root;
      return t > 1e-6 ? t : Infinity;
    }
    normal(point) { return point.sub(this.center).norm(); }
    colorAt() { return this.color; }
  }

  class Plane {
    constructor(y) { this.y = y; this.mirror = 0.2; }
    hit(origin, dir) { if (Math.abs(dir.y) < 1e-9) return Infinity; const t = (this.y - origin.y) / dir.y; return t > 1e-6 ? t : Infinity; }
    normal() { return new Vec(0, 1, 0); }
    colorAt(point) { return ((Math.floor(point.x) + Math.floor(point.z)) & 1) ? new Vec(0.9, 0.9, 0.9) : new Vec(0.1, 0.1, 0.1); }
  }

  function scene(random) {
    const things = [new Plane(0)];
    for (let i = 0; i < 8; i++) {
      const c = new Vec(random() * 8 - 4, 0.5 + random() * 1.5, random() * 6 + 3);
      things.push(new Sphere(c, 0.4 + random() * 0.6, new Vec(random(), random(), random()), random() * 0.6));
    }
    return { things, light: new Vec(-4, 7, -2) };
  }

  function trace(world, origin, dir, depth) {
    let nearest = Infinity, thing = null;
    for (const t of world.things) { const d = t.hit(origin, dir); if (d < nearest) { nearest = d; thing = t; } }
    if (thing === null) return new Vec(0.2, 0.3, 0.5);
    const point = origin.add(dir.scale(nearest));
    const normal = thing.normal(point);
    const toLight = world.light.sub(point).norm();
    let shadow = false;
    for (const t of world.things) if (t !== thing && t.hit(point, toLight) < Infinity) { shadow = true; break; }
    const diffuse = shadow ? 0 : Math.max(0, normal.dot(toLight));
    const reflected = dir.sub(normal.scale(2 * normal.dot(dir)));
    let spec = shadow ? 0 : Math.max(0, reflected.dot(toLight));
    spec *= spec; spec *= spec; spec *= spec; spec *= spec; // ^16 without pow
    let color = thing.colorAt(point).scale(0.15 + 0.85 * diffuse).add(new Vec(spec, spec, spec));
    if (depth < 3 && thing.mirror > 0) color = color.scale(1 - thing.mirror).add(trace(world, point, reflected, depth + 1).scale(thing.mirror));
    return color;
  }

  function raytrace(size) {
    const world = scene(rng(2));
    const width = size, height = (size * 3) >> 2;
    const eye = new Vec(0, 1.5, -4);
    let check = 0;
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const dir = new Vec((x - width / 2) / height, (height / 2 - y) / height, 1).norm();
        const c = trace(world, eye, dir, 0);
        const r = Math.min(255, Math.floor(c.x * 255)), g = Math.min(255, Math.floor(c.y * 255)), b = Math.min(255, Math.floor(c.z * 255));
        check = (check + r * 3 + g * 5 + b * 7) >>> 0;
      }
    }
    return check;
  }

  // -- regexp: extraction, validation and rewriting over generated log-like text -------------
  const WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
                 "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango"];
  const texts = new Map();

  function textOf(size) {
    if (!texts.has(size)) {
      const random = rng(3);
      const pick = (list) => list[(random() * list.length) | 0];
      const lines = [];
      for (let i = 0; i < size; i++) {
        const day = 1 + ((random() * 28) | 0), month = 1 + ((random() * 12) | 0), year = 2000 + ((random() * 25) | 0);
        const user = pick(WORDS) + "." + pick(WORDS);
        const level = pick(["INFO", "WARN", "ERROR", "DEBUG"]);
        lines.push(`${year}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")} ${level} ` +
                   `user=${user}@${pick(WORDS)}.example.org took ${(random() * 5000) | 0}ms ` +
                   `GET /${pick(WORDS)}/${(random() * 1e5) | 0}?q=${pick(WORDS)}+${pick(WORDS)} ` +
                   `${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)} #${(random() * 1e4) | 0}`);
      }
      texts.set(size, lines.join("\n"));
    }
    return texts.get(size);
  }

  function regexp(size) {
    const text = textOf(size);
    let check = 0;
    const email = /\b([a-z]+)\.([a-z]+)@([a-z]+)\.example\.org\b/g;
    for (let m; (m = email.exec(text)) !== null;) check += m[1].length + m[3].length;
    const slow = text.match(/took (?:[3-9]\d{3})ms/g);
    check += slow ? slow.length : 0;
    const dates = text.replace(/^(\d{4})-(\d{2})-(\d{2})/gm, (_, y, m, d) => `${d}/${m}/${y}`);
    check += dates.length;
    for (const line of text.split("\n")) {
      if (/\bERROR\b.*\/(?:alpha|echo|tango)\//.test(line)) check += 3;
      if (/q=(\w+)\+\1\b/.test(line)) check += 7;
    }
    check += text.split(/\s+/).filter((w) => /^[a-m]+$/i.test(w)).length;
    return check >>> 0;
  }

  // -- JSON: stringify and parse a large nested document ------------------------------------
  const documents = new Map();

  function documentOf(size) {
    if (!documents.has(size)) {
      const random = rng(4);
      const records = [];
      for (let i = 0; i < size; i++) {
        records.push({
          id: i, name: WORDS[i % WORDS.length] + "-" + ((random() * 1e6) | 0), active: random() < 0.5,
          score: ((random() * 1e6) | 0) / 1000, tags: [WORDS[(random() * 20) | 0], WORDS[(random() * 20) | 0]],
          address: { street: `${(random() * 999) | 0} ${WORDS[i % 20]} road`, zip: String((random() * 1e5) | 0).padStart(5, "0"),
                     geo: { lat: ((random() * 180e4) | 0) / 1e4 - 90, lon: ((random() * 360e4) | 0) / 1e4 - 180 } },
          history: Array.from({ length: 1 + ((random() * 5) | 0) }, (_, k) => ({ at: 1700000000 + k * 86400, value: (random() * 100) | 0, note: null })),
        });
      }
      documents.set(size, { version: 3, generated: "shootout", records });
    }
    return documents.get(size);
  }

  function json(size) {
    const text = JSON.stringify(documentOf(size));
    const back = JSON.parse(text);
    let check = text.length;
    for (const r of back.records) {
      check += r.history.length + (r.active ? 1 : 0) + r.tags[0].length;
      check += Math.round(r.score * 1000) + Math.round(r.address.geo.lat * 1e4);
    }
    return check >>> 0;
  }

  // -- physics: particles under gravity, elastic collisions found through a uniform grid ----
  function physics(size) {
    const random = rng(5);
    const n = size, radius = 0.5, box = Math.sqrt(n) * 2.5, cells = Math.max(1, Math.floor(box / (2 * radius)));
    const x = new Float64Array(n), y = new Float64Array(n), vx = new Float64Array(n), vy = new Float64Array(n);
    for (let i = 0; i < n; i++) { x[i] = radius + random() * (box - 2 * radius); y[i] = radius + random() * (box - 2 * radius); vx[i] = random() - 0.5; vy[i] = random() - 0.5; }
    const head = new Int32Array(cells * cells), next = new Int32Array(n);
    const dt = 0.02, steps = 40;
    let collisions = 0;
    for (let s = 0; s < steps; s++) {
      head.fill(-1);
      for (let i = 0; i < n; i++) {
        vy[i] -= 9.81 * dt; x[i] += vx[i] * dt; y[i] += vy[i] * dt;
        if (x[i] < radius) { x[i] = radius; vx[i] = -vx[i] * 0.9; } else if (x[i] > box - radius) { x[i] = box - radius; vx[i] = -vx[i] * 0.9; }
        if (y[i] < radius) { y[i] = radius; vy[i] = -vy[i] * 0.9; } else if (y[i] > box - radius) { y[i] = box - radius; vy[i] = -vy[i] * 0.9; }
        const c = Math.min(cells - 1, Math.floor(x[i] / box * cells)) + cells * Math.min(cells - 1, Math.floor(y[i] / box * cells));
        next[i] = head[c]; head[c] = i;
      }
      for (let cy = 0; cy < cells; cy++) for (let cx = 0; cx < cells; cx++) {
        for (let i = head[cx + cells * cy]; i !== -1; i = next[i]) {
          for (let ny = Math.max(0, cy - 1); ny <= Math.min(cells - 1, cy + 1); ny++) for (let nx = Math.max(0, cx - 1); nx <= Math.min(cells - 1, cx + 1); nx++) {
            for (let j = head[nx + cells * ny]; j !== -1; j = next[j]) {
              if (j <= i) continue;
              const dx = x[j] - x[i], dy = y[j] - y[i], d2 = dx * dx + dy * dy;
              if (d2 >= 4 * radius * radius || d2 === 0) continue;
              const d = Math.sqrt(d2), nxv = dx / d, nyv = dy / d;
              const rel = (vx[j] - vx[i]) * nxv + (vy[j] - vy[i]) * nyv;
              if (rel >= 0) continue;
              vx[i] += rel * nxv; vy[i] += rel * nyv; vx[j] -= rel * nxv; vy[j] -= rel * nyv;
              collisions++;
            }
          }
        }
      }
    }
    let check = collisions;
    for (let i = 0; i < n; i++) check = (check + Math.floor(x[i] * 1000) + Math.floor(y[i] * 1000)) >>> 0;
    return check;
  }

  const KERNELS = { splay, raytrace, regexp, json, physics };

  window.runKernel = async (name, runs, size) => {
    const kernel = KERNELS[name];
    if (!kernel) throw new Error(`engine: unknown kernel ${name}`);
    let check = 0;
    const t0 = performance.now();
    for (let i = 0; i < runs; i++) check = kernel(size);
    return { ms: performance.now() - t0, check };
  };
})();
