// The small part of mvdan-sh's API (a GopherJS build of mvdan.cc/sh/syntax) used here.
declare module "mvdan-sh" {
  interface Pos {
    Offset(): number;
  }
  interface Node {
    Pos(): Pos;
    End(): Pos;
    [field: string]: any;
  }
  interface Parser {
    /** Throws an object whose `Error()` is the message (`1:6: reached EOF without closing quote '`). */
    Parse(src: string, name: string): Node;
  }
  export const syntax: {
    NewParser(...options: unknown[]): Parser;
    Walk(node: Node, visit: (node: Node | null) => boolean): void;
    NodeType(node: Node): string;
  };
}
