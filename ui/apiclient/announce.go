package apiclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Announcement is what a running Docket writes beside the embedded ledger
// it holds: where its API listens. chDB lets one process open a ledger
// directory, so a CLI that finds the directory held reads this to talk to
// the holder instead.
type Announcement struct {
	URL string `json:"url"`
	PID int    `json:"pid"`
}

// AnnouncementFile is the announcement of the process holding ledgerDir.
func AnnouncementFile(ledgerDir string) string { return ledgerDir + ".api.json" }

// Announce records that this process serves url for ledgerDir.
func Announce(ledgerDir, url string) error {
	raw, err := json.Marshal(Announcement{URL: url, PID: os.Getpid()})
	if err != nil {
		return err
	}
	if err := os.WriteFile(AnnouncementFile(ledgerDir), raw, 0o600); err != nil {
		return fmt.Errorf("apiclient: announce the API address: %w", err)
	}
	return nil
}

// Withdraw removes this process's announcement (at shutdown).
func Withdraw(ledgerDir string) {
	if a, ok := Discover(ledgerDir); ok && a.PID == os.Getpid() {
		_ = os.Remove(AnnouncementFile(ledgerDir))
	}
}

// Discover reads the announcement for ledgerDir, if its process still
// runs on this host; one left by a killed process is ignored.
func Discover(ledgerDir string) (Announcement, bool) {
	raw, err := os.ReadFile(AnnouncementFile(ledgerDir))
	if err != nil {
		return Announcement{}, false
	}
	var a Announcement
	if json.Unmarshal(raw, &a) != nil || a.URL == "" || a.PID <= 0 {
		return Announcement{}, false
	}
	if err := syscall.Kill(a.PID, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return Announcement{}, false
	}
	return a, true
}
