package sshserver

import "golang.org/x/crypto/ssh"

// The auth policy: everyone gets in and nobody is asked anything; a client
// that has a key is known by it.
//
//   - "none" is refused, listing publickey and keyboard-interactive. It has
//     to be: OpenSSH (and PuTTY, and dbclient) try "none" first, and a
//     server that accepts it never sees their keys.
//   - publickey accepts any key. The player's identity is the SHA256
//     fingerprint of the key that authenticated, which x/crypto hands back
//     in the Permissions of the successful authentication
//     (ssh.ServerConn.Permissions). PublicKeyCallback also runs for keys
//     that are only queried, or whose signature then fails, so nothing may
//     be recorded from inside it (CVE-2024-45337): it only fills the
//     Permissions of that key.
//   - keyboard-interactive with no questions lets keyless clients in: one
//     info request with zero prompts, one empty response, success. Clients
//     show no prompt for it (PuTTY still asks for one Return before the
//     session starts; see the README).

// keyExtension is the Permissions extension that carries the fingerprint of
// the key a connection authenticated with.
const keyExtension = "snaked-key-sha256"

// acceptKey is the PublicKeyCallback: any key is welcome.
func acceptKey(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
	return &ssh.Permissions{Extensions: map[string]string{keyExtension: ssh.FingerprintSHA256(key)}}, nil
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
