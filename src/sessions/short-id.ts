/**
 * Short session ids. A session id is a UUIDv7 whose first 48 bits are its
 * creation time, so sessions started within a minute share their first 8
 * characters; its last 12 hex digits are random. A session's short id is
 * therefore taken from the end: the shortest tail of at least 8 characters
 * (32 random bits) that no other session's id ends with, growing to the whole
 * last group (12) and else the full id. `agent sessions list` shows it, and
 * every option naming a session accepts it beside a full id, an id prefix or a name.
 */
export const SHORT_ID_MIN = 8;
const LAST_GROUP = 12;
const SHORT_REF = new RegExp(`^[0-9a-f]{${SHORT_ID_MIN},${LAST_GROUP}}$`);

/** Each id's short id among `ids`. */
export function shortIds(ids: readonly string[]): Map<string, string> {
  const shorts = new Map<string, string>();
  for (const id of ids) {
    let short = id;
    for (let length = SHORT_ID_MIN; length <= LAST_GROUP; length += 1) {
      const tail = id.slice(-length);
      if (!ids.some((other) => other !== id && other.endsWith(tail))) {
        short = tail;
        break;
      }
    }
    shorts.set(id, short);
  }
  return shorts;
}

/** Whether `ref` (lower case) names the id: as a prefix of it (any length), or as a short id (a tail of 8-12 hex digits). */
export function idMatches(id: string, ref: string): boolean {
  return id.startsWith(ref) || (SHORT_REF.test(ref) && id.endsWith(ref));
}
