import packageJson from "../../package.json" with { type: "json" };

// Replaced at compile time by build.ts (`define`), so the binary knows the exact
// build it is; running from source falls back to the package version.
declare const AGENT_VERSION: string | undefined;

export const VERSION: string = typeof AGENT_VERSION === "string" ? AGENT_VERSION : `${packageJson.version}-dev`;
