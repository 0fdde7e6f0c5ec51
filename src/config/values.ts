import { PROFILE_NAMES, type ProfileChoice } from "../model/profiles/chat-profile.ts";
import { isProfileName } from "../model/profiles/detect.ts";
import { PROVIDER_NAMES, type ProviderName, isProviderName } from "../model/providers/provider.ts";
import { type ValueSource, invalidValue } from "../core/values.ts";
import { API_VERSION, PERMISSION_MODES, type PermissionMode, TEAMMATE_PANES, type TeammatePanes } from "./config.ts";
import { LEAD_MODES, type LeadMode } from "./modes.ts";
import { type StoreSelection, displayStoreUrl, parseStoreUrl } from "../store/store-url.ts";

/** A wire protocol: openai, openai-responses or anthropic. */
export function parseProvider(value: string, source: ValueSource): ProviderName {
  if (isProviderName(value)) return value;
  throw invalidValue(source, value, `one of ${PROVIDER_NAMES.join(", ")}`);
}

/** A Chat Completions dialect (`auto`: from the base URL's host). */
export function parseProfile(value: string, source: ValueSource): ProfileChoice {
  if (value === "auto" || isProfileName(value)) return value;
  throw invalidValue(source, value, `auto or one of ${PROFILE_NAMES.join(", ")}`);
}

/** Azure OpenAI's `api-version` (`--api-version`, config apiVersion). */
export function parseApiVersion(value: string, source: ValueSource): string {
  if (API_VERSION.test(value)) return value;
  throw invalidValue(source, value, "an Azure OpenAI API version such as 2024-10-21 or 2025-04-01-preview");
}

export function parsePermissionMode(value: string, source: ValueSource): PermissionMode {
  if (!(PERMISSION_MODES as readonly string[]).includes(value)) throw invalidValue(source, value, `one of ${PERMISSION_MODES.join(", ")}`);
  return value as PermissionMode;
}

/** `files` or a PostgreSQL URL (`--store`, AGENT_STORE, config `store`); a password in it is masked from then on. */
export function parseStore(value: string, source: ValueSource): StoreSelection {
  const parsed = parseStoreUrl(value);
  // The value itself may hold a password: never echo it back.
  if ("problem" in parsed) throw invalidValue(source, displayStoreUrl(value), parsed.problem);
  return parsed;
}

/** off or tmux (`--teammate-panes`, config terminal.teammatePanes). */
export function parseTeammatePanes(value: string, source: ValueSource): TeammatePanes {
  if (!(TEAMMATE_PANES as readonly string[]).includes(value)) throw invalidValue(source, value, `one of ${TEAMMATE_PANES.join(", ")}`);
  return value as TeammatePanes;
}

export function parseLeadMode(value: string, source: ValueSource): LeadMode {
  if (!(LEAD_MODES as readonly string[]).includes(value)) throw invalidValue(source, value, `one of ${LEAD_MODES.join(", ")}`);
  return value as LeadMode;
}
