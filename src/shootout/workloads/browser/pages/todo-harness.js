// The to-do benchmark, driven through the DOM the way a user would: type into the input,
// press Enter, click checkboxes, click delete buttons. Every app renders the same markup
// (todo.css), so one harness drives all of them.
//
// Each step is timed in two parts:
//   sync  - dispatching the events: the framework's event handlers and any work they do at once;
//   async - from there until the DOM shows the step's result (microtasks, scheduled renders,
//           polled one task at a time), plus a forced style and layout of the app.
// window.runTodo({items, iterations, warmup}) resolves to one {add, complete, delete} record
// of [sync ms, async ms] per timed iteration; it throws when the app ends in a wrong state.
"use strict";

(() => {
  const setValue = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set;
  const channel = new MessageChannel();
  const waiting = [];
  channel.port1.onmessage = () => waiting.shift()();
  // A task boundary without setTimeout's clamping: lets microtasks and queued work run.
  const nextTask = () => new Promise((resolve) => { waiting.push(resolve); channel.port2.postMessage(0); });
  const LIMIT_MS = 20000;

  async function settle(name, check) {
    const start = performance.now();
    while (!check()) {
      if (performance.now() - start > LIMIT_MS) throw new Error(`todo ${name}: the app did not reach the expected state`);
      await nextTask();
    }
  }

  async function step(name, action, check) {
    const t0 = performance.now();
    action();
    const t1 = performance.now();
    await settle(name, check);
    document.querySelector(".todoapp").getBoundingClientRect(); // style and layout, now
    const t2 = performance.now();
    return [t1 - t0, t2 - t1];
  }

  const rows = () => document.querySelectorAll(".todo-list > li");
  const countText = () => document.querySelector(".todo-count").textContent.trim();

  async function iteration(items, round) {
    const input = document.querySelector(".new-todo");
    const add = await step("add", () => {
      for (let i = 0; i < items; i++) {
        setValue.call(input, `Item ${round}.${i}: water the plants, then call about the invoice`);
        input.dispatchEvent(new Event("input", { bubbles: true }));
        input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", code: "Enter", keyCode: 13, bubbles: true }));
      }
    }, () => rows().length === items && countText() === `${items} left`);
    const complete = await step("complete", () => {
      for (const box of document.querySelectorAll(".todo-list .toggle")) box.click();
    }, () => document.querySelectorAll(".todo-list > li.completed").length === items && countText() === "0 left");
    const remove = await step("delete", () => {
      const buttons = document.querySelectorAll(".todo-list .destroy");
      for (let i = buttons.length - 1; i >= 0; i--) buttons[i].click();
    }, () => rows().length === 0);
    return { add, complete, delete: remove };
  }

  window.runTodo = async ({ items, iterations, warmup }) => {
    await settle("mount", () => document.querySelector(".new-todo") !== null);
    const out = [];
    for (let r = 0; r < warmup + iterations; r++) {
      const result = await iteration(items, r);
      if (r >= warmup) out.push(result);
    }
    return out;
  };
})();
