// Build the to-do apps (src/) into self-contained browser bundles (one IIFE script per framework).
// Runs on the host under node, with the pinned packages of package-lock.json:
//   node build.mjs <node_modules parent dir> <sources dir (src/)> <output dir>
// Output is deterministic for the pinned versions: no timestamps, no absolute paths, minified.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";

const [modulesDir, appsDir, outDir] = process.argv.slice(2);
const require = createRequire(path.join(path.resolve(modulesDir), "package.json"));
const esbuild = require("esbuild");
const { compile: compileSvelte } = require("svelte/compiler");
const { compileTemplate } = require("vue/compiler-sfc");

// A Svelte component compiles to a JavaScript module that imports Svelte's client runtime.
const svelte = {
  name: "svelte",
  setup(build) {
    build.onLoad({ filter: /\.svelte$/ }, async (args) => {
      const source = await readFile(args.path, "utf8");
      const out = compileSvelte(source, { filename: path.basename(args.path), generate: "client", dev: false });
      return { contents: out.js.code, loader: "js", resolveDir: path.dirname(args.path) };
    });
  },
};

// A Vue template compiles to a render function, exactly as in a single-file component.
const vueTemplate = {
  name: "vue-template",
  setup(build) {
    build.onLoad({ filter: /vue-template\.html$/ }, async (args) => {
      const source = await readFile(args.path, "utf8");
      const out = compileTemplate({ source, filename: path.basename(args.path), id: "todo",
                                    compilerOptions: { mode: "module", hoistStatic: true, prefixIdentifiers: true } });
      if (out.errors.length) throw new Error(`vue template: ${out.errors[0]}`);
      return { contents: out.code, loader: "js", resolveDir: path.dirname(args.path) };
    });
  },
};

const apps = {
  react: { entry: "react.jsx", jsxImportSource: "react" },
  preact: { entry: "preact.jsx", jsxImportSource: "preact" },
  vue: { entry: "vue.js" },
  svelte: { entry: "svelte.js" },
  vanilla: { entry: "vanilla.js" },
};

for (const [name, app] of Object.entries(apps)) {
  await esbuild.build({
    entryPoints: [app.entry],
    outfile: path.resolve(outDir, `app-${name}.js`),
    absWorkingDir: path.resolve(appsDir),
    nodePaths: [path.join(path.resolve(modulesDir), "node_modules")],
    bundle: true,
    format: "iife",
    platform: "browser",
    target: "es2020",
    minify: true,
    legalComments: "none",
    charset: "utf8",
    jsx: "automatic",
    jsxImportSource: app.jsxImportSource,
    define: {
      "process.env.NODE_ENV": '"production"',
      __VUE_OPTIONS_API__: "false",
      __VUE_PROD_DEVTOOLS__: "false",
      __VUE_PROD_HYDRATION_MISMATCH_DETAILS__: "false",
    },
    plugins: [svelte, vueTemplate],
    logLevel: "error",
  });
  console.log(`built app-${name}.js`);
}
