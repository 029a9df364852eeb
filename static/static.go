// Package static holds the web app's assets, embedded in the binary so that
// Burnrate works offline and ships as one file. Third-party files under
// vendor/ are copied from npm by `make assets` at the versions pinned in
// package.json; they are committed, never fetched at run time.
package static

import "embed"

// FS holds css/, img/, js/ and vendor/.
//
//go:embed css img js vendor
var FS embed.FS
