// The to-do app in Preact (hooks, a controlled input, keyed list). DOM contract: see todo.css.
import { render } from "preact";
import { useRef, useState } from "preact/hooks";

function Item({ item, onToggle, onDestroy }) {
  return (
    <li class={item.done ? "todo completed" : "todo"}>
      <input class="toggle" type="checkbox" checked={item.done} onChange={() => onToggle(item.id)} />
      <label>{item.text}</label>
      <button class="destroy" onClick={() => onDestroy(item.id)} />
    </li>
  );
}

function App() {
  const [items, setItems] = useState([]);
  const [draft, setDraft] = useState("");
  const next = useRef(0);
  const onKeyDown = (event) => {
    if (event.key !== "Enter") return;
    const text = event.currentTarget.value.trim();
    if (text) {
      const id = next.current++;
      setItems((list) => [...list, { id, text, done: false }]);
    }
    setDraft("");
  };
  const toggle = (id) => setItems((list) => list.map((t) => (t.id === id ? { ...t, done: !t.done } : t)));
  const destroy = (id) => setItems((list) => list.filter((t) => t.id !== id));
  const left = items.filter((t) => !t.done).length;
  return (
    <section class="todoapp">
      <header>
        <h1>todos</h1>
        <input class="new-todo" placeholder="What needs to be done?" value={draft}
          onInput={(e) => setDraft(e.currentTarget.value)} onKeyDown={onKeyDown} />
      </header>
      <ul class="todo-list">
        {items.map((item) => <Item key={item.id} item={item} onToggle={toggle} onDestroy={destroy} />)}
      </ul>
      <footer><span class="todo-count">{left} left</span></footer>
    </section>
  );
}

render(<App />, document.getElementById("app"));
