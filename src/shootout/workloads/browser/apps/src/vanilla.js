// The to-do app in plain DOM code: one model array, elements updated in place, events
// delegated to the list. Synchronous: the DOM is current when an event handler returns.
const root = document.getElementById("app");
root.innerHTML = `<section class="todoapp"><header><h1>todos</h1>
  <input class="new-todo" placeholder="What needs to be done?"></header>
  <ul class="todo-list"></ul><footer><span class="todo-count">0 left</span></footer></section>`;

const input = root.querySelector(".new-todo");
const list = root.querySelector(".todo-list");
const count = root.querySelector(".todo-count");
const items = new Map(); // id -> { text, done, li }
let next = 0;
let draft = "";

function updateCount() {
  let left = 0;
  for (const item of items.values()) if (!item.done) left++;
  count.textContent = `${left} left`;
}

function add(text) {
  const id = next++;
  const li = document.createElement("li");
  li.className = "todo";
  li.dataset.id = String(id);
  const toggle = document.createElement("input");
  toggle.className = "toggle";
  toggle.type = "checkbox";
  const label = document.createElement("label");
  label.textContent = text;
  const destroy = document.createElement("button");
  destroy.className = "destroy";
  li.append(toggle, label, destroy);
  list.append(li);
  items.set(id, { text, done: false, li });
}

input.addEventListener("input", () => { draft = input.value; });
input.addEventListener("keydown", (event) => {
  if (event.key !== "Enter") return;
  const text = input.value.trim();
  if (text) add(text);
  draft = "";
  input.value = draft;
  updateCount();
});
list.addEventListener("change", (event) => {
  const li = event.target.closest("li");
  const item = items.get(Number(li.dataset.id));
  item.done = event.target.checked;
  li.classList.toggle("completed", item.done);
  updateCount();
});
list.addEventListener("click", (event) => {
  if (!event.target.classList.contains("destroy")) return;
  const li = event.target.closest("li");
  items.delete(Number(li.dataset.id));
  li.remove();
  updateCount();
});
