print("entitled-datadir: being written")
