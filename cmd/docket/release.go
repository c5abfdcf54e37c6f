package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/crypto/ssh"

	"github.com/docketlabs/docket/internal/release"
)

// maxKeyFileSize bounds the public key file read before parsing.
const maxKeyFileSize = 16 << 10

func versionCommand() *cobra.Command {
	var dir, keyFile string
	cmd := &cobra.Command{
		Use:   "version [--verify DIR --key KEY.pub]",
		Short: "Print the version, or verify a release directory's checksums and signature",
		Long: fmt.Sprintf(`Without flags, print the version (the commit the binary was built from).

With --verify, check a release directory made by "make release": the
signature on %[1]s must be the release key's (--key, an Ed25519 public
key in the "ssh-ed25519 AAAA…" form, obtained from the project, not from the
directory being checked), every file listed must have its listed SHA-256, and
no file in the directory may be missing from the list.

Without docket, the same check is:
  echo "docket $(cat KEY.pub)" > allowed_signers
  ssh-keygen -Y verify -f allowed_signers -I docket -n %[2]s -s %[3]s < %[1]s
  sha256sum --strict -c %[1]s`, release.SumsFile, release.Namespace, release.SigFile),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				if keyFile != "" {
					return errors.New("version: --key needs --verify DIR")
				}
				_, err := fmt.Fprintln(cmd.OutOrStdout(), buildVersion())
				return err
			}
			if keyFile == "" {
				return errors.New("version --verify: --key KEY.pub is required")
			}
			info, err := os.Stat(keyFile)
			if err != nil {
				return fmt.Errorf("version --verify: %w", err)
			}
			if info.Size() > maxKeyFileSize {
				return fmt.Errorf("version --verify: %s is larger than %d bytes", keyFile, maxKeyFileSize)
			}
			data, err := os.ReadFile(keyFile)
			if err != nil {
				return fmt.Errorf("version --verify: %w", err)
			}
			pub, err := release.ParsePublicKey(data)
			if err != nil {
				return fmt.Errorf("version --verify: %s: %w", keyFile, err)
			}
			entries, err := release.Verify(dir, pub)
			if err != nil {
				return fmt.Errorf("version --verify %s: %w", dir, err)
			}
			out := cmd.OutOrStdout()
			for _, e := range entries {
				fmt.Fprintf(out, "ok  %s (%d bytes)\n", e.Name, e.Size)
			}
			_, err = fmt.Fprintf(out, "%s: %d files match %s, signed by %s\n", dir, len(entries), release.SumsFile, ssh.FingerprintSHA256(pub))
			return err
		},
	}
	cmd.Flags().StringVar(&dir, "verify", "", "release directory to verify")
	cmd.Flags().StringVar(&keyFile, "key", "", "release public key file (ssh-ed25519 …)")
	return cmd
}
