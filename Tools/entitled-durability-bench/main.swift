print("entitled-durability-bench: being written")
