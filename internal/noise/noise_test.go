package noise

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/env"
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

func TestRunFollowsTheScheduleAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []Phase
	busy, idle, err := Run(ctx, 3, 5*time.Millisecond, 15*time.Millisecond, env.CPU{}, func(i int, p Phase) {
		got = append(got, p)
		if len(got) == 4 {
			cancel()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Schedule(3, 5*time.Millisecond, 15*time.Millisecond, 4)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("phases %v, want the schedule %v", got, want)
	}
	if busy != want[0].Len+want[2].Len || idle != want[1].Len+want[3].Len {
		t.Errorf("busy %v idle %v, want %v and %v", busy, idle, want[0].Len+want[2].Len, want[1].Len+want[3].Len)
	}
	if _, _, err := Run(ctx, 1, 0, time.Second, env.CPU{}, nil); err == nil {
		t.Error("min 0 accepted")
	}
}
