import { UsageError } from "../../core/errors.ts";
import { type ChatProfile, PROFILE_NAMES, type ProfileName } from "./chat-profile.ts";
import { PROFILES } from "./profiles.ts";

const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]", "::1", "0.0.0.0"]);

/** The profile a base URL's host calls for: `openai` without a URL, `generic` for a host we do not know. */
export function detectProfile(baseUrl: string | undefined): ChatProfile {
  if (baseUrl === undefined) return PROFILES.openai;
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return PROFILES.generic;
  }
  const host = url.hostname.toLowerCase();
  for (const profile of Object.values(PROFILES)) {
    if (profile.hosts.some((known) => host === known || host.endsWith(`.${known}`))) return profile;
  }
  if (LOCAL_HOSTS.has(host)) {
    const port = Number(url.port);
    const local = Object.values(PROFILES).find((profile) => profile.ports?.includes(port));
    if (local) return local;
  }
  return PROFILES.generic;
}

/** The profile named by --profile / config `profile`; `auto` (or nothing) detects it from the URL. */
export function resolveProfile(name: string | undefined, baseUrl: string | undefined): ChatProfile {
  if (name === undefined || name === "auto") return detectProfile(baseUrl);
  if (!isProfileName(name)) {
    throw new UsageError(`unknown profile ${JSON.stringify(name)}: use auto or one of ${PROFILE_NAMES.join(", ")}`);
  }
  return PROFILES[name];
}

export function isProfileName(name: string): name is ProfileName {
  return (PROFILE_NAMES as readonly string[]).includes(name);
}
