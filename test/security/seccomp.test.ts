import { describe, expect, test } from "bun:test";
import { printfEscaped, seccompFilter } from "../../src/security/sandbox/seccomp.ts";

// The filter's decisions, read by a small classic-BPF interpreter over
// `struct seccomp_data`: so the arm64 program is checked too, on a machine that
// can only run the x86-64 one (the sandbox tests run that one for real).

const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;
const KILL_PROCESS = 0x80000000;

/** Runs the program over one system call: nr, arch, args[0] as a 64-bit value. */
function decide(program: Uint8Array, call: { arch: number; nr: number; arg0?: bigint }): number {
  const data = new DataView(new ArrayBuffer(64));
  data.setInt32(0, call.nr, true);
  data.setUint32(4, call.arch, true);
  data.setBigUint64(16, call.arg0 ?? 0n, true);
  const code = new DataView(program.buffer, program.byteOffset, program.byteLength);
  let accumulator = 0;
  for (let pc = 0; pc * 8 < program.length; pc += 1) {
    const op = code.getUint16(pc * 8, true);
    const jt = code.getUint8(pc * 8 + 2);
    const jf = code.getUint8(pc * 8 + 3);
    const k = code.getUint32(pc * 8 + 4, true);
    if (op === 0x20) accumulator = data.getUint32(k, true);
    else if (op === 0x15) pc += accumulator === k ? jt : jf;
    else if (op === 0x06) return k;
    else throw new Error(`unexpected BPF opcode ${op.toString(16)} at ${pc}`);
  }
  throw new Error("the program fell off its end");
}

const X86_64 = 0xc000003e;
const I386 = 0x40000003;
const AARCH64 = 0xc00000b7;
const ARM = 0x40000028;
const AF_UNIX = 1n;
const AF_INET = 2n;

describe("the seccomp filter", () => {
  test("x86-64: socket(AF_UNIX) refused in every ABI, other sockets and socketpair allowed, io_uring refused, an unknown ABI killed", () => {
    const program = seccompFilter("x64")!;
    expect(program.length % 8).toBe(0);
    expect(decide(program, { arch: X86_64, nr: 41, arg0: AF_UNIX })).toBe(EPERM);
    // The kernel reads an int: high bits set in the register change nothing.
    expect(decide(program, { arch: X86_64, nr: 41, arg0: (1n << 32n) | AF_UNIX })).toBe(EPERM);
    expect(decide(program, { arch: X86_64, nr: 41, arg0: AF_INET })).toBe(ALLOW);
    expect(decide(program, { arch: X86_64, nr: 0x40000000 + 41, arg0: AF_UNIX })).toBe(EPERM);
    expect(decide(program, { arch: X86_64, nr: 53, arg0: AF_UNIX })).toBe(ALLOW); // socketpair
    expect(decide(program, { arch: X86_64, nr: 42 })).toBe(ALLOW); // connect: only the socket's creation is checked
    expect(decide(program, { arch: X86_64, nr: 425 })).toBe(EPERM); // io_uring_setup
    expect(decide(program, { arch: X86_64, nr: 0x40000000 + 425 })).toBe(EPERM);
    expect(decide(program, { arch: X86_64, nr: 0 })).toBe(ALLOW);
    expect(decide(program, { arch: I386, nr: 359, arg0: AF_UNIX })).toBe(EPERM);
    expect(decide(program, { arch: I386, nr: 359, arg0: AF_INET })).toBe(ALLOW);
    expect(decide(program, { arch: I386, nr: 102 })).toBe(EPERM); // socketcall
    expect(decide(program, { arch: I386, nr: 425 })).toBe(EPERM);
    expect(decide(program, { arch: AARCH64, nr: 198, arg0: AF_UNIX })).toBe(KILL_PROCESS);
  });

  test("arm64 and 32-bit arm the same, with their own numbers", () => {
    const program = seccompFilter("arm64")!;
    expect(decide(program, { arch: AARCH64, nr: 198, arg0: AF_UNIX })).toBe(EPERM);
    expect(decide(program, { arch: AARCH64, nr: 198, arg0: AF_INET })).toBe(ALLOW);
    expect(decide(program, { arch: AARCH64, nr: 199, arg0: AF_UNIX })).toBe(ALLOW); // socketpair
    expect(decide(program, { arch: AARCH64, nr: 425 })).toBe(EPERM);
    expect(decide(program, { arch: ARM, nr: 281, arg0: AF_UNIX })).toBe(EPERM);
    expect(decide(program, { arch: ARM, nr: 281, arg0: AF_INET })).toBe(ALLOW);
    expect(decide(program, { arch: X86_64, nr: 41, arg0: AF_UNIX })).toBe(KILL_PROCESS);
  });

  test("with sockets allowed by the user's config, unix sockets may be made; io_uring stays refused", () => {
    const program = seccompFilter("x64", { unixSockets: true })!;
    expect(decide(program, { arch: X86_64, nr: 41, arg0: AF_UNIX })).toBe(ALLOW);
    expect(decide(program, { arch: X86_64, nr: 425 })).toBe(EPERM);
  });

  test("no filter for an architecture it does not know; the printf form is every byte in octal", () => {
    expect(seccompFilter("ia32")).toBeUndefined();
    expect(printfEscaped(new Uint8Array([0, 8, 255]))).toBe("\\000\\010\\377");
  });
});
