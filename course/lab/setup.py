import math
import time

import matplotlib.pyplot as plt
import numpy as np
import torch

_ = torch.manual_seed(0)  # reproducible examples
