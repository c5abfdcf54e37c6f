package release

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/pem"
	"errors"
	"fmt"

	"golang.org/x/crypto/ssh"
)

// The signature is OpenSSH's SSHSIG format (PROTOCOL.sshsig), as written by
// `ssh-keygen -Y sign`: the release owner signs with a key they already
// hold (a file, an agent or a hardware token), and anyone can check a
// release with ssh-keygen alone. Only Ed25519 keys are accepted.

// Namespace is the SSHSIG namespace of release signatures; a signature made
// for another purpose (git commits, files) with the same key does not verify.
const Namespace = "docket-release"

const sigMagic = "SSHSIG"

// ParsePublicKey reads an Ed25519 public key in authorized_keys form
// ("ssh-ed25519 AAAA… comment"), the form ssh-keygen writes to KEY.pub.
func ParsePublicKey(data []byte) (ssh.PublicKey, error) {
	pub, _, _, rest, err := ssh.ParseAuthorizedKey(data)
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, errors.New("public key: more than one key given")
	}
	if pub.Type() != ssh.KeyAlgoED25519 {
		return nil, fmt.Errorf("public key: %s, want an Ed25519 key", pub.Type())
	}
	return pub, nil
}

// sshSig is the signature blob inside the armor.
type sshSig struct {
	Version   uint32
	PublicKey []byte
	Namespace string
	Reserved  string
	HashAlg   string
	Signature []byte
}

// signedData is what the key actually signs: the message's hash bound to
// the namespace.
func signedData(namespace, hashAlg string, message []byte) ([]byte, error) {
	var h []byte
	switch hashAlg {
	case "sha512":
		s := sha512.Sum512(message)
		h = s[:]
	case "sha256":
		s := sha256.Sum256(message)
		h = s[:]
	default:
		return nil, fmt.Errorf("signature: unsupported hash %q", hashAlg)
	}
	return append([]byte(sigMagic), ssh.Marshal(struct {
		Namespace string
		Reserved  string
		HashAlg   string
		Hash      []byte
	}{namespace, "", hashAlg, h})...), nil
}

// VerifySignature checks an armored SSHSIG signature of message by pub in
// the release namespace.
func VerifySignature(pub ssh.PublicKey, message, armored []byte) error {
	block, rest := pem.Decode(armored)
	if block == nil || block.Type != "SSH SIGNATURE" || len(bytes.TrimSpace(rest)) != 0 {
		return errors.New("signature: not one armored SSH SIGNATURE block")
	}
	blob, ok := bytes.CutPrefix(block.Bytes, []byte(sigMagic))
	if !ok {
		return errors.New("signature: not an SSHSIG blob")
	}
	var sig sshSig
	if err := ssh.Unmarshal(blob, &sig); err != nil {
		return fmt.Errorf("signature: %w", err)
	}
	if sig.Version != 1 {
		return fmt.Errorf("signature: version %d, want 1", sig.Version)
	}
	if sig.Namespace != Namespace {
		return fmt.Errorf("signature: namespace %q, want %q", sig.Namespace, Namespace)
	}
	if !bytes.Equal(sig.PublicKey, pub.Marshal()) {
		return fmt.Errorf("signature: made by another key, not %s", ssh.FingerprintSHA256(pub))
	}
	var inner ssh.Signature
	if err := ssh.Unmarshal(sig.Signature, &inner); err != nil {
		return fmt.Errorf("signature: %w", err)
	}
	data, err := signedData(sig.Namespace, sig.HashAlg, message)
	if err != nil {
		return err
	}
	if err := pub.Verify(data, &inner); err != nil {
		return fmt.Errorf("signature: does not match the checksums with key %s: %w", ssh.FingerprintSHA256(pub), err)
	}
	return nil
}
