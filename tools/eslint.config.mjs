// ESLint flat config for our own JavaScript: the report viewer (browser, an
// IIFE embedded into the HTML) and the Node test drivers in tools/.
import js from "@eslint/js";
import globals from "globals";

const strict = {
  ...js.configs.recommended.rules,
  "no-var": "error",
  "prefer-const": "error",
  eqeqeq: ["error", "always"],
  "no-implicit-globals": "error",
  "no-shadow": "error",
  "no-unused-vars": ["error", { args: "after-used" }],
  curly: ["error", "multi-line"],
  "no-console": "off"
};

export default [
  {
    files: ["src/report/assets/**/*.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "script", globals: { ...globals.browser } },
    rules: { ...strict, "no-console": "error" }
  },
  {
    // Node drivers; code passed to page.evaluate() runs in the browser.
    files: ["tools/**/*.mjs"],
    ignores: ["tools/node_modules/**"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: { ...globals.node, ...globals.browser } },
    rules: strict
  }
];
