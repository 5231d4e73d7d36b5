//go:build armbe || arm64be || m68k || mips || mips64 || mips64p32 || ppc || ppc64 || s390 || s390x || shbe || sparc || sparc64

package render

// bigEndian is whether quad puts the first of its cells in the high bits
// (TestEndian checks it against memory).
const bigEndian = true
