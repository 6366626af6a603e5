/* Typeset TeX as MathML with KaTeX, for build.py.
 * stdin:  JSON [{"tex": "...", "display": true|false}, ...]
 * stdout: JSON [{"mathml": "<math ...>"} or {"error": "KaTeX's message"}, ...] in the same order.
 * KaTeX is resolved from node_modules (NODE_PATH or the folder above this one). */
const katex = require("katex");

function typeset({ tex, display }) {
  try {
    return { mathml: katex.renderToString(tex, {
      output: "mathml", displayMode: Boolean(display), throwOnError: true }) };
  } catch (error) {
    if (error instanceof katex.ParseError) return { error: error.message };
    throw error;
  }
}

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  process.stdout.write(JSON.stringify(JSON.parse(input).map(typeset)));
});
