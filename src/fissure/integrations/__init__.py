"""Drop-ins for the frameworks users already have: LangChain and LlamaIndex.

Each adapter is its own module, imported only when asked for, and needs its extra:
``pip install 'fissure[langchain]'`` for :mod:`fissure.integrations.langchain`,
``pip install 'fissure[llama-index]'`` for :mod:`fissure.integrations.llama_index`.
"""
