// The to-do app in React (hooks, a controlled input, keyed list). DOM contract: see todo.css.
import { useRef, useState } from "react";
import { createRoot } from "react-dom/client";

function Item({ item, onToggle, onDestroy }) {
  return (
    <li className={item.done ? "todo completed" : "todo"}>
      <input className="toggle" type="checkbox" checked={item.done} onChange={() => onToggle(item.id)} />
      <label>{item.text}</label>
      <button className="destroy" onClick={() => onDestroy(item.id)} />
    </li>
  );
}

function App() {
  const [items, setItems] = useState([]);
  const [draft, setDraft] = useState("");
  const next = useRef(0);
  const onKeyDown = (event) => {
    if (event.key !== "Enter") return;
    const text = event.target.value.trim();
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
    <section className="todoapp">
      <header>
        <h1>todos</h1>
        <input className="new-todo" placeholder="What needs to be done?" value={draft}
          onChange={(e) => setDraft(e.target.value)} onKeyDown={onKeyDown} />
      </header>
      <ul className="todo-list">
        {items.map((item) => <Item key={item.id} item={item} onToggle={toggle} onDestroy={destroy} />)}
      </ul>
      <footer><span className="todo-count">{left} left</span></footer>
    </section>
  );
}

createRoot(document.getElementById("app")).render(<App />);
