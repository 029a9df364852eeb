package billing_test

import (
	"testing"

	"github.com/burnrate/burnrate/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }
