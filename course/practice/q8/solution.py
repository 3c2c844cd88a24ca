q8_product_39 = 0.9 ** 39
