"""Result tables (flows, sampled rates, cwnd and queues), summaries and parquet I/O."""
