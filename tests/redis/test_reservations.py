"""A reserved capacity holds. CF.RESERVE k N takes N distinct items in its first table at any
BUCKETSIZE and any MAXITERATIONS (the table is sized for the load an add reaches with that many moves)."""
import pytest


def info(c, key):
    reply = c("CF.INFO", key)
    return {reply[i]: reply[i + 1] for i in range(0, len(reply), 2)}


def add_pipelined(c, key, items, batch=5000):
    replies = []
    for start in range(0, len(items), batch):
        part = items[start:start + batch]
        for item in part:
            c.send("CF.ADD", key, item)
        replies.extend(c.read() for _ in part)
    return replies


@pytest.mark.parametrize("options", [
    ("BUCKETSIZE", 4),
    (),
    ("MAXITERATIONS", 1),
    ("MAXITERATIONS", 20),
    ("BUCKETSIZE", 4, "MAXITERATIONS", 1),
    ("BUCKETSIZE", 8, "MAXITERATIONS", 2),
])
def test_fifty_thousand_fit_in_the_first_table(c, options):
    assert c("CF.RESERVE", "k", 50000, *options) == "OK"
    replies = add_pipelined(c, "k", ["item:%d" % i for i in range(50000)])
    assert replies == [1] * 50000
    fields = info(c, "k")
    assert fields["Number of filters"] == 1
    assert fields["Number of items inserted"] == 50000


@pytest.mark.parametrize("bucket_size", [1, 2, 4, 8])
def test_small_reservations_hold_at_every_bucket_size_and_iteration_count(c, bucket_size):
    n = 0
    capacities = sorted({2 * bucket_size, 2 * bucket_size + 1, 33, 100, 1000})  # below 2b is refused
    for capacity in capacities:
        for iterations in (1, 2, 5, 20, 500):
            for run in range(3):
                key = "s:%d:%d:%d" % (capacity, iterations, run)
                assert c("CF.RESERVE", key, capacity, "BUCKETSIZE", bucket_size,
                         "MAXITERATIONS", iterations) == "OK"
                items = ["%s:%d" % (key, i) for i in range(capacity)]
                assert add_pipelined(c, key, items) == [1] * capacity
                fields = info(c, key)
                assert (key, fields["Number of filters"]) == (key, 1)
                n += 1
    assert n == len(capacities) * 5 * 3
