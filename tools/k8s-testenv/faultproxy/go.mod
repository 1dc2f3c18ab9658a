module shardflow.local/faultproxy

go 1.26.0
