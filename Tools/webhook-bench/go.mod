module entitled.dev/webhook-bench

go 1.19
