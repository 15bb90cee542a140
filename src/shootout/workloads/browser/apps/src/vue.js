// The to-do app in Vue (Composition API); its template is compiled at build time, as a
// single-file component's would be (build.mjs), so the page runs Vue's runtime only.
import { computed, createApp, ref } from "vue";
import { render } from "./vue-template.html";

const App = {
  setup() {
    const items = ref([]);
    const draft = ref("");
    let next = 0;
    const left = computed(() => items.value.filter((t) => !t.done).length);
    const add = (event) => {
      const text = event.target.value.trim();
      if (text) items.value.push({ id: next++, text, done: false });
      draft.value = "";
    };
    const destroy = (id) => {
      const at = items.value.findIndex((t) => t.id === id);
      if (at >= 0) items.value.splice(at, 1);
    };
    return { items, draft, left, add, destroy };
  },
  render,
};

createApp(App).mount("#app");
