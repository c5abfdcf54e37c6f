package auth

import (
	"fmt"
	"os"

	"golang.org/x/term"

	"github.com/docketlabs/docket/internal/atomicfile"
)

// OneTimePasswordFile is where DeliverOneTimePassword writes a created
// admin's password when no terminal is attached: beside the users file.
func OneTimePasswordFile(usersFile string) string { return usersFile + ".admin-password" }

// DeliverOneTimePassword hands the one-time password of a created admin to
// a person, never to a log: on tty when it is a terminal, otherwise into
// OneTimePasswordFile (mode 0600), whose path it returns. Services run
// with stderr captured by a log collector, so stderr counts only when it
// is a terminal.
func DeliverOneTimePassword(tty *os.File, usersFile, password string) (file string, err error) {
	if tty != nil && term.IsTerminal(int(tty.Fd())) {
		_, err := fmt.Fprintf(tty, "\n  Docket UI: created user \"admin\" with one-time password %s\n  (it must be changed at first sign-in; accounts are in %s)\n\n", password, usersFile)
		return "", err
	}
	file = OneTimePasswordFile(usersFile)
	// A file left from an earlier users file is replaced by a new one, never
	// reused with its old mode.
	text := fmt.Sprintf("Docket UI: one-time password of user \"admin\" (change it at first sign-in, then delete this file):\n%s\n", password)
	if err := atomicfile.WriteFile(file, []byte(text), 0o600); err != nil {
		return "", fmt.Errorf("auth: one-time password file: %w", err)
	}
	return file, nil
}
