# mutant: returns a torch tensor, not a NumPy array (torch.softmax on the array)
# must fail: matches the reference on random logits
def softmax(x, axis=-1):
    return torch.softmax(torch.from_numpy(x), dim=axis)
