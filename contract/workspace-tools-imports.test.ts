// The edges of imports.ts's scanner the generated sweep found untested: quotes, spacing and
// line starts of each import form. The launcher binds what the runner imports and the layer test
// checks every arrow, so a specifier missed or made up is a file unbound or an arrow unchecked.
import { describe, expect, it } from "vitest";
import { importsOf } from "../src/core/imports.ts";

describe("the import specifiers of a source", () => {
  it("each form, in source order, with either quote and any spacing", () => {
    const src = [
      `import a from 'a.ts';`,
      `  export * from "./b.ts";`,
      // Split, so the layer test's own scan of this file does not read it as an import.
      `const c = await import(` + `  './c.ts'  );`,
      `import"./d.ts";`,
      `import\t{ e }\tfrom\t"./e.ts";`,
      `import { i,`,
      `  j } from "./ij.ts";`,
    ].join("\n");
    expect(importsOf(src)).toEqual(["a.ts", "./b.ts", "./c.ts", "./d.ts", "./e.ts", "./ij.ts"]);
  });

  it("a line that only mentions an import is not one", () => {
    const src = [
      `// import { g } from "./g.ts";`,
      `exporter from "./h.ts";`,
      `const s = "import './s.ts'";`,
      `important from "./m.ts";`,
      `import { n }; from "./n.ts";`,
    ].join("\n");
    expect(importsOf(src)).toEqual([]);
  });
});
