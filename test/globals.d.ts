// Test code reads many JSON bodies whose shape each assertion spells out;
// typing each one would only repeat the assertion.
declare global {
  interface Body {
    json(): Promise<any>;
  }
  interface Response {
    json(): Promise<any>;
  }
}
export {};
