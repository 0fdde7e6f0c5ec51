/**
 * The seccomp filter bwrap installs in the sandbox (`--seccomp FD`): a classic
 * BPF program over `struct seccomp_data` (nr at offset 0, arch at 4, args[i] at
 * 16 + 8*i), built here so nothing is shipped per architecture.
 *
 * It refuses `socket(AF_UNIX, …)` with EPERM: a named or abstract unix socket of
 * the host (D-Bus, docker.sock, an SSH or GPG agent, a database's socket) can
 * only be reached through a socket made that way. BPF cannot read the address
 * `connect` is given (it is a pointer), so the socket's creation is what is
 * refused; `socketpair(AF_UNIX)` stays allowed, since the pair it makes is
 * connected to nothing but itself (Node's and Bun's child-process pipes are
 * such pairs). `io_uring_setup` is refused too: io_uring's socket operation
 * would create a socket without the `socket` system call.
 */

const AF_UNIX = 1;
const EPERM = 1;

const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const RET_KILL_PROCESS = 0x80000000;

// BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, BPF_RET|BPF_K
const LD_ABS = 0x20;
const JEQ = 0x15;
const RET = 0x06;

const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
/** args[0]'s low 32 bits on a little-endian machine: `socket` takes an int, so the kernel reads only those. */
const OFFSET_ARG0_LOW = 16;

/** System call numbers of one ABI. */
interface Abi {
  arch: number;
  socket: number[];
  /** i386's multiplexer: its arguments are behind a pointer, so every call to it is refused. */
  socketcall?: number;
  ioUringSetup: number[];
}

interface Machine {
  native: Abi;
  /** The 32-bit ABI the kernel also runs on this machine. */
  compat: Abi;
}

/** x32 calls come with x86-64's arch and this bit set in the number. */
const X32 = 0x40000000;

const MACHINES: Partial<Record<NodeJS.Architecture, Machine>> = {
  x64: {
    native: { arch: 0xc000003e, socket: [41, X32 + 41], ioUringSetup: [425, X32 + 425] },
    compat: { arch: 0x40000003, socket: [359], socketcall: 102, ioUringSetup: [425] },
  },
  arm64: {
    native: { arch: 0xc00000b7, socket: [198], ioUringSetup: [425] },
    compat: { arch: 0x40000028, socket: [281], ioUringSetup: [425] },
  },
};

type Jump = string | 0;
type Line = { label: string } | { code: number; k: number; jt?: Jump; jf?: Jump };

/**
 * The filter for this machine's architecture, or undefined where there is none
 * (the sandbox then cannot start). With `unixSockets` (some are allowed by the
 * user's config) `socket(AF_UNIX)` is let through and only the mounts hide the
 * host's sockets; io_uring stays refused.
 */
export function seccompFilter(arch: NodeJS.Architecture = process.arch, options: { unixSockets?: boolean } = {}): Uint8Array | undefined {
  const key = `${arch} ${options.unixSockets === true}`;
  // Assembled once per kind: a run's probe and each command it wraps ask again.
  if (!assembled.has(key)) assembled.set(key, assembleFilter(arch, options));
  return assembled.get(key);
}

const assembled = new Map<string, Uint8Array | undefined>();

function assembleFilter(arch: NodeJS.Architecture, options: { unixSockets?: boolean }): Uint8Array | undefined {
  const machine = MACHINES[arch];
  if (machine === undefined) return undefined;
  const abi = (name: string, calls: Abi): Line[] => [
    { label: name },
    { code: LD_ABS, k: OFFSET_NR },
    ...(options.unixSockets ? [] : calls.socket.map((nr): Line => ({ code: JEQ, k: nr, jt: "family" }))),
    ...(calls.socketcall === undefined ? [] : [{ code: JEQ, k: calls.socketcall, jt: "deny" }]),
    ...calls.ioUringSetup.map((nr): Line => ({ code: JEQ, k: nr, jt: "deny" })),
    { code: RET, k: RET_ALLOW },
  ];
  return assemble([
    { code: LD_ABS, k: OFFSET_ARCH },
    { code: JEQ, k: machine.native.arch, jt: "native" },
    { code: JEQ, k: machine.compat.arch, jt: "compat" },
    // An ABI this filter does not know: nothing it could call is vetted.
    { code: RET, k: RET_KILL_PROCESS },
    ...abi("native", machine.native),
    ...abi("compat", machine.compat),
    { label: "family" },
    { code: LD_ABS, k: OFFSET_ARG0_LOW },
    { code: JEQ, k: AF_UNIX, jt: "deny" },
    { code: RET, k: RET_ALLOW },
    { label: "deny" },
    { code: RET, k: RET_ERRNO | EPERM },
  ]);
}

/** `struct sock_filter` records (u16 code, u8 jt, u8 jf, u32 k; little-endian), jumps resolved from labels. */
function assemble(lines: Line[]): Uint8Array {
  const labels = new Map<string, number>();
  const instructions: Array<Extract<Line, { code: number }>> = [];
  for (const line of lines) {
    if ("label" in line) labels.set(line.label, instructions.length);
    else instructions.push(line);
  }
  const bytes = new Uint8Array(instructions.length * 8);
  const view = new DataView(bytes.buffer);
  instructions.forEach((instruction, index) => {
    const offset = (jump: Jump | undefined): number => {
      if (jump === undefined || jump === 0) return 0;
      const distance = labels.get(jump)! - index - 1;
      // Conditional jumps are forward only and one byte long.
      if (!(distance >= 0 && distance < 256)) throw new Error(`seccomp: jump to ${jump} out of range`);
      return distance;
    };
    view.setUint16(index * 8, instruction.code, true);
    view.setUint8(index * 8 + 2, offset(instruction.jt));
    view.setUint8(index * 8 + 3, offset(instruction.jf));
    view.setUint32(index * 8 + 4, instruction.k >>> 0, true);
  });
  return bytes;
}

/**
 * The program as a printf format (every byte an octal escape), so the argv
 * that starts bwrap carries it and no file is needed: see bubblewrap.ts.
 */
export function printfEscaped(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => `\\${byte.toString(8).padStart(3, "0")}`).join("");
}
