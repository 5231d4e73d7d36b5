package sshserver

import (
	"crypto/rsa"
	"errors"
	"strconv"

	"golang.org/x/crypto/ssh"
)

// The auth policy: everyone gets in and nobody is asked anything; a client
// that has a key is known by it.
//
//   - "none" is refused, listing publickey and keyboard-interactive. It has
//     to be: OpenSSH (and PuTTY, and dbclient) try "none" first, and a
//     server that accepts it never sees their keys.
//   - publickey accepts any key except an RSA key of more than maxRSABits
//     bits, which PublicKeyCallback declines. x/crypto runs it before it
//     checks any signature: a client that asks about a key before signing
//     with it (OpenSSH, PuTTY and x/crypto do) is told no at the query,
//     never signs, and goes on to its next key or to keyless; a signature
//     sent without asking is checked (x/crypto parses RSA keys of at most
//     16384 bits) and then refused, a counted failure.
//   - The player's identity is the SHA256 fingerprint of the key that
//     authenticated, which x/crypto hands back in the Permissions of the
//     successful authentication (ssh.ServerConn.Permissions).
//     PublicKeyCallback also runs for keys that are only queried, or whose
//     signature then fails, so nothing may be recorded from inside it
//     (CVE-2024-45337): it only fills the Permissions of that key. A failed
//     signature closes the connection (x/crypto), so a key the client cannot
//     sign with never becomes anyone's identity, and a key that was only
//     queried is never the identity of a client that then gets in by
//     keyboard-interactive.
//   - A certificate is known by its certified key: the identity is the
//     fingerprint of cert.Key, so a player whose certificates are reissued
//     every day keeps one identity, the same as with the bare key. The CA
//     and the certificate's signature, principals and validity are not
//     checked: the identity is the key whose possession the signature
//     proves, and the RSA limit applies to that key.
//   - keyboard-interactive with no questions lets keyless clients in: one
//     info request with zero prompts, one empty response, success. Clients
//     show no prompt for it (PuTTY still asks for one Return before the
//     session starts; see the README).
//   - A connection is closed after maxAuthFailures failed attempts. x/crypto
//     counts every refused attempt except the first "none" probe, and does
//     not count declined key queries until there have been maxAuthFailures
//     of them; a failed signature ends the connection at once.

const (
	// maxAuthFailures is ServerConfig.MaxAuthTries: a connection is closed
	// at its third failed authentication attempt. Honest clients never fail
	// here: every key they can sign with is accepted (an oversized RSA key
	// is declined at its query, and x/crypto lets this many declined queries
	// go uncounted), keyboard-interactive asks nothing, and the initial
	// "none" probe is refused but is not a failure. Three leaves room for a
	// confused client (a script trying a password first) while a client that
	// only fails is dropped after three round trips instead of x/crypto's
	// default six.
	maxAuthFailures = 3

	// maxRSABits is the largest RSA modulus accepted as a player's key
	// (plain or certified): 8192 bits, the largest size in common use and
	// the limit Go's crypto/tls puts on RSA keys in certificates. Larger
	// keys only make the server's work bigger and are declined; x/crypto
	// itself refuses to parse more than 16384 bits.
	maxRSABits = 8192
)

// keyExtension is the Permissions extension that carries the fingerprint of
// the key a connection authenticated with.
const keyExtension = "snaked-key-sha256"

// errRSATooLarge declines an RSA key of more than maxRSABits bits.
var errRSATooLarge = errors.New("sshserver: RSA key larger than " + strconv.Itoa(maxRSABits) + " bits")

// acceptKey is the PublicKeyCallback: any key is welcome but an oversized
// RSA one. A certificate stands for its certified key.
func acceptKey(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
	if cert, ok := key.(*ssh.Certificate); ok {
		key = cert.Key
	}
	if rsaBits(key) > maxRSABits {
		return nil, errRSATooLarge
	}
	return &ssh.Permissions{Extensions: map[string]string{keyExtension: ssh.FingerprintSHA256(key)}}, nil
}

// rsaBits is the modulus length of an RSA key, 0 for any other key.
func rsaBits(key ssh.PublicKey) int {
	ck, ok := key.(ssh.CryptoPublicKey)
	if !ok {
		return 0
	}
	pk, ok := ck.CryptoPublicKey().(*rsa.PublicKey)
	if !ok || pk.N == nil {
		return 0
	}
	return pk.N.BitLen()
}

// keyless is the KeyboardInteractiveCallback: a challenge with no questions,
// then success. Whatever the client answers beyond zero answers fails the
// exchange inside x/crypto.
func keyless(_ ssh.ConnMetadata, challenge ssh.KeyboardInteractiveChallenge) (*ssh.Permissions, error) {
	if _, err := challenge("", "", nil, nil); err != nil {
		return nil, err
	}
	return nil, nil
}

// keyOf is the SHA256 fingerprint ("SHA256:...") of the key the connection
// authenticated with, from the Permissions of the successful authentication;
// empty for a keyless client.
func keyOf(p *ssh.Permissions) string {
	if p == nil {
		return ""
	}
	return p.Extensions[keyExtension]
}
