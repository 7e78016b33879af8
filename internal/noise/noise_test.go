package noise

import (
	"context"
	"reflect"
	"testing"
	"time"
)

func TestScheduleIsSeededAndBounded(t *testing.T) {
	a := Schedule(7, 100*time.Millisecond, 500*time.Millisecond, 200)
	if !reflect.DeepEqual(a, Schedule(7, 100*time.Millisecond, 500*time.Millisecond, 200)) {
		t.Fatal("the same seed gave two schedules")
	}
	if reflect.DeepEqual(a, Schedule(8, 100*time.Millisecond, 500*time.Millisecond, 200)) {
		t.Fatal("seeds 7 and 8 gave the same schedule")
	}
	var short, long bool
	for i, p := range a {
		if p.Busy != (i%2 == 0) || p.Len < 100*time.Millisecond || p.Len > 500*time.Millisecond {
			t.Fatalf("phase %d: %+v", i, p)
		}
		short = short || p.Len < 200*time.Millisecond
		long = long || p.Len > 400*time.Millisecond
	}
	if !short || !long {
		t.Errorf("200 draws never went below 200ms (%v) or above 400ms (%v)", short, long)
	}
}

func TestRunTogglesAndStops(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	start := time.Now()
	busy, idle, err := Run(ctx, 1, 20*time.Millisecond, 40*time.Millisecond, -1)
	if err != nil {
		t.Fatal(err)
	}
	if busy == 0 || idle == 0 {
		t.Errorf("busy %v idle %v: want both phases in 150ms of 20-40ms phases", busy, idle)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Run took %v after its context ended at 150ms", d)
	}
	if _, _, err := Run(ctx, 1, 0, time.Second, -1); err == nil {
		t.Error("min 0 accepted")
	}
}
