package auth

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/term"
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
	// A file left from an earlier users file is replaced, never reused
	// with its old mode.
	if err := os.Remove(file); err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("auth: one-time password file: %w", err)
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("auth: one-time password file: %w", err)
	}
	_, err = fmt.Fprintf(f, "Docket UI: one-time password of user \"admin\" (change it at first sign-in, then delete this file):\n%s\n", password)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("auth: one-time password file: %w", err)
	}
	return file, nil
}
