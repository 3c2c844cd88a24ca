batch, heads, layers, T = 8, 12, 12, 4096
q11_bytes = batch * heads * layers * T ** 2 * 4
q11_bytes_bf16 = batch * heads * layers * T ** 2 * 2
