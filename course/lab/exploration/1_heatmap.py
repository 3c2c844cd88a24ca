# Toy embeddings: "it" is built to resemble "cat", so its query should find cat's key.
import matplotlib.pyplot as plt  # here, not in the setup cell: grading skips these cells

words = ["The", "cat", "sat", "on", "the", "mat", "because", "it"]
g = torch.Generator().manual_seed(0)
emb = torch.randn(len(words), 16, generator=g)
emb[7] = emb[1] + 0.3 * torch.randn(16, generator=g)  # "it" ≈ "cat"
try:
    _, w = self_attention(emb, torch.eye(16), torch.eye(16), torch.eye(16), causal=True)
    fig, ax = plt.subplots(figsize=(5, 4))
    im = ax.imshow(w.detach().numpy(), cmap="viridis")
    ax.set_xticks(range(len(words)), words, rotation=45)
    ax.set_yticks(range(len(words)), words)
    ax.set_xlabel("key"); ax.set_ylabel("query"); ax.set_title("Causal self-attention weights")
    fig.colorbar(im); plt.show()
    print(f"'it' puts {w[7, 1]:.2f} of its weight on 'cat'")
except Exception as err:  # your c3-c5 are not ready yet
    print("self_attention is not ready yet:", repr(err))
